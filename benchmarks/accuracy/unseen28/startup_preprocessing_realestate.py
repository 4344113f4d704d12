"""Sanity check of the house-price model graph before a training job.

Prints the environment, builds the model with its preprocessing layers adapted
on a small sample, and scores two listings.
"""

import platform
import time

import numpy as np
import tensorflow as tf
import keras

NEIGHBOURHOODS = ["riverside", "old town", "harbour", "hillcrest", "university", "airport"]
PROPERTY_TYPES = ["flat", "terrace", "semi", "detached", "bungalow"]


def sample_listings(n, seed=0):
    rng = np.random.default_rng(seed)
    numeric = np.stack(
        [
            rng.uniform(30, 250, n),  # floor area m2
            rng.integers(1, 6, n),  # bedrooms
            rng.integers(1900, 2024, n),  # year built
            rng.uniform(0.1, 15, n),  # km to centre
        ],
        axis=1,
    ).astype(np.float32)
    hood = rng.choice(NEIGHBOURHOODS, n)
    ptype = rng.choice(PROPERTY_TYPES, n)
    return numeric, hood, ptype


def build_model(numeric, hood, ptype):
    norm = keras.layers.Normalization(name="numeric_norm")
    norm.adapt(numeric)
    hood_lookup = keras.layers.StringLookup(output_mode="one_hot", name="hood_lookup")
    hood_lookup.adapt(hood)
    type_lookup = keras.layers.StringLookup(output_mode="one_hot", name="type_lookup")
    type_lookup.adapt(ptype)

    num_in = keras.Input((numeric.shape[1],), name="numeric")
    hood_in = keras.Input((1,), dtype="string", name="neighbourhood")
    type_in = keras.Input((1,), dtype="string", name="property_type")
    x = keras.layers.Concatenate()(
        [
            norm(num_in),
            keras.layers.Flatten()(hood_lookup(hood_in)),
            keras.layers.Flatten()(type_lookup(type_in)),
        ]
    )
    x = keras.layers.Dense(64, activation="relu")(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    price = keras.layers.Dense(1, name="log_price")(x)
    model = keras.Model([num_in, hood_in, type_in], price)
    model.compile(optimizer="adam", loss="mse")
    return model


def main():
    t0 = time.perf_counter()
    print(
        "python",
        platform.python_version(),
        "| tensorflow",
        tf.__version__,
        "| keras",
        keras.__version__,
    )
    for dev in tf.config.list_physical_devices():
        print("device:", dev.device_type, dev.name)
    print("built with CUDA:", tf.test.is_built_with_cuda())

    numeric, hood, ptype = sample_listings(500)
    model = build_model(numeric, hood, ptype)
    model.summary()

    n2, h2, p2 = sample_listings(2, seed=7)
    preds = model.predict(
        [tf.constant(n2), tf.constant(h2[:, None]), tf.constant(p2[:, None])], verbose=0
    )
    for row, h, p, y in zip(n2, h2, p2, preds[:, 0]):
        print(f"{h:>10s} {p:>9s} {row[0]:6.1f} m2 -> log price {y:+.3f}")
    print(f"graph check finished in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
