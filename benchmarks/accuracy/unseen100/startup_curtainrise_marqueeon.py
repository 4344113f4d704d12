import time; T0 = time.perf_counter()
"""Marquee sign-board models: a start-up smoke test that trains nothing.

Before the box office opens, a script loads the show's little model zoo
(ticket demand, queue length, marquee bulb failure, crowd noise,
poster copy, act line-up and poster proof models),
checks which devices TensorFlow sees, compiles each model and runs one
prediction through it to be sure everything is wired.  Then it exits.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras


def demand_model():
    inp = keras.Input(shape=(30, 12))
    h = keras.layers.LSTM(64)(inp)
    h = keras.layers.Dense(32, activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(1)(h), name="ticket_demand")


def queue_model():
    return keras.Sequential([
        keras.Input(shape=(20,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dropout(0.1),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ], name="queue_length")


def bulb_model():
    return keras.Sequential([
        keras.Input(shape=(48, 96, 3)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(2),
    ], name="marquee_bulbs")


def noise_model():
    inp = keras.Input(shape=(64, 40))
    h = keras.layers.Conv1D(32, 5, activation="relu")(inp)
    h = keras.layers.GRU(32)(h)
    return keras.Model(inp, keras.layers.Dense(5)(h), name="crowd_noise")


def poster_text_model():
    inp = keras.Input(shape=(24, 32))
    h = keras.layers.MultiHeadAttention(num_heads=4, key_dim=16)(inp, inp)
    h = keras.layers.LayerNormalization()(h + inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(3)(h), name="poster_copy")


def lineup_model():
    inp = keras.Input(shape=(16, 8))
    h = keras.layers.Bidirectional(keras.layers.LSTM(32))(inp)
    return keras.Model(inp, keras.layers.Dense(16)(h), name="act_lineup")


def poster_proof_model():
    inp = keras.Input(shape=(128, 96, 3))
    h = inp
    for filters in (16, 32, 64):
        h = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(h)
        h = keras.layers.BatchNormalization()(h)
        h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    return keras.Model(inp, keras.layers.Dense(4)(h), name="poster_proof")


def main():
    devices = tf.config.list_physical_devices()
    print(f"[marqueeon] TensorFlow {tf.__version__}, Keras {keras.__version__}, "
          f"devices: {[d.device_type for d in devices]}")
    rng = np.random.default_rng(0)
    for build in (demand_model, queue_model, bulb_model, noise_model,
                  poster_text_model, lineup_model, poster_proof_model):
        t = time.perf_counter()
        model = build()
        model.compile(optimizer="adam", loss="mse")
        x = rng.normal(size=(8,) + tuple(model.input_shape[1:])).astype(np.float32)
        y = model.predict(x, verbose=0)
        print(f"[marqueeon]   {model.name}: {model.count_params()} params, "
              f"output {y.shape}, {time.perf_counter()-t:.2f}s")
    print(f"[marqueeon] start-up check done, trained nothing, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
