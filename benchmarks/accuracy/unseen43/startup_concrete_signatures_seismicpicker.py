"""Pre-deployment check for a seismic phase-picking service.

Before the picker is put into the real-time pipeline, this script imports
TensorFlow, lists the visible devices, builds and compiles the three picker
models (a Conv1D P/S picker, a BiLSTM event detector and a small attention
magnitude regressor), traces serving signatures for the station window
lengths with get_concrete_function, and runs one warm-up predict on a
synthetic waveform batch. Nothing is trained.
"""
import os
import sys
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def picker(win):
    inp = keras.Input((win, 3))
    x = inp
    for f in (16, 32, 64, 64):
        x = layers.Conv1D(f, 7, padding="same", activation="relu")(x)
    return keras.Model(inp, layers.Conv1D(3, 1, activation="softmax")(x), name=f"picker_{win}")


def detector(win):
    inp = keras.Input((win, 3))
    x = layers.Conv1D(32, 9, strides=4, padding="same", activation="relu")(inp)
    x = layers.Bidirectional(layers.LSTM(32, return_sequences=True))(x)
    x = layers.GlobalMaxPooling1D()(x)
    return keras.Model(inp, layers.Dense(1, activation="sigmoid")(x), name=f"detector_{win}")


def magnitude(win):
    inp = keras.Input((win, 3))
    x = layers.Conv1D(64, 9, strides=8, padding="same", activation="relu")(inp)
    x = layers.MultiHeadAttention(4, 16)(x, x)
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, layers.Dense(1)(x), name=f"magnitude_{win}")


def main():
    devices = tf.config.list_physical_devices()
    logical = tf.config.list_logical_devices()
    models = []
    for build, loss in ((picker, "categorical_crossentropy"), (detector, "binary_crossentropy"),
                        (magnitude, "mse")):
        m = build(3000)
        m.compile(optimizer="adam", loss=loss)
        models.append(m)
    traced = 0
    for m in models:
        fn = tf.function(lambda x, m=m: m(x, training=False))
        for win in (3000,):
            for bs in (1, 8):
                fn.get_concrete_function(tf.TensorSpec((bs, win, 3), tf.float32))
                traced += 1
    wave = np.random.default_rng(43).normal(size=(8, 3000, 3)).astype(np.float32)
    out = models[0].predict(wave, verbose=0)
    params = sum(m.count_params() for m in models)
    print(f"seismic picker preflight: {len(devices)} physical / {len(logical)} logical devices, "
          f"{len(models)} models, {params} params, {traced} signatures, "
          f"warm-up output {out.shape}, {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
