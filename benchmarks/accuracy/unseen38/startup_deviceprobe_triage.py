"""Smoke test for an ER-triage scoring service before deployment.

Imports TensorFlow, reports the visible devices and build info, builds the
tabular triage model and the wound-photo CNN (MobileNetV2, random init), and
scores a handful of synthetic patients.  No training.
"""
import time

T0 = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

N_VITALS = 14
N_CODES = 3000


def build_model():
    vitals = keras.Input((N_VITALS,), name="vitals")
    codes = keras.Input((12,), dtype="int32", name="codes")
    emb = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(N_CODES, 32)(codes))
    h = keras.layers.Concatenate()([keras.layers.Normalization()(vitals), emb])
    h = keras.layers.Dense(128, activation="relu")(h)
    h = keras.layers.Dropout(0.2)(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    acuity = keras.layers.Dense(5, activation="softmax", name="acuity")(h)
    return keras.Model([vitals, codes], acuity)


def main():
    t_import = time.perf_counter() - T0
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    print("built with CUDA:", tf.test.is_built_with_cuda())
    for dev in tf.config.list_physical_devices():
        print("physical device:", dev.name, dev.device_type)
    print("logical devices:", [d.name for d in tf.config.list_logical_devices()])
    print("GPU available:", bool(tf.config.list_physical_devices("GPU")))

    keras.utils.set_random_seed(0)
    model = build_model()
    model.summary(print_fn=lambda line: None)
    rng = np.random.default_rng(0)
    patients = {
        "vitals": rng.normal(0, 1, (6, N_VITALS)).astype(np.float32),
        "codes": rng.integers(0, N_CODES, (6, 12)).astype(np.int32),
    }
    probs = model.predict(patients, verbose=0)
    levels = probs.argmax(axis=1) + 1

    photo_model = keras.applications.MobileNetV2(
        input_shape=(160, 160, 3), weights=None, classes=4, alpha=1.0)
    photos = rng.uniform(0, 1, (4, 160, 160, 3)).astype(np.float32)
    wound = photo_model.predict(photos, verbose=0).argmax(axis=1)
    print(f"startup: import {t_import:.1f}s, {model.count_params()} params, "
          f"acuity levels {levels.tolist()}, wound classes {wound.tolist()}, "
          f"photo model {photo_model.count_params()} params, total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
