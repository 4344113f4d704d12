import time; T0 = time.perf_counter()
"""Atelier service warm-up: load TensorFlow and the shop's small models.

Imports TensorFlow, lists devices, builds and compiles the small models
used at the cutting table (size, yardage, alteration, stitch, fabric),
predicts once with each and exits. Nothing is trained.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
rng = np.random.default_rng(10212)


def dense_model(n_in, n_out, width, name):
    m = keras.Sequential([keras.Input(shape=(n_in,)),
                          keras.layers.Dense(width, activation="relu"),
                          keras.layers.Dense(width // 2, activation="relu"),
                          keras.layers.Dense(n_out)], name=name)
    m.compile(optimizer="adam", loss="mse")
    return m


def swatch_model():
    m = keras.Sequential([keras.Input(shape=(32, 32, 3)),
                          keras.layers.Conv2D(16, 3, activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(6)], name="swatch_weave")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def notes_model():
    m = keras.Sequential([keras.Input(shape=(20,), dtype="int32"),
                          keras.layers.Embedding(500, 16),
                          keras.layers.GRU(16),
                          keras.layers.Dense(5)], name="fitting_notes")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


models = [
    (dense_model(12, 8, 64, "size_chart"), rng.normal(size=(4, 12))),
    (dense_model(30, 1, 128, "yardage"), rng.normal(size=(4, 30))),
    (dense_model(16, 6, 64, "alteration"), rng.normal(size=(4, 16))),
    (dense_model(96, 4, 128, "stitch_quality"), rng.normal(size=(4, 96))),
    (swatch_model(), rng.normal(size=(4, 32, 32, 3))),
    (notes_model(), rng.integers(0, 500, size=(4, 20))),
    (dense_model(24, 3, 96, "bolt_grade"), rng.normal(size=(4, 24))),
    (dense_model(40, 4, 128, "lapel_roll"), rng.normal(size=(4, 40))),
    (dense_model(56, 6, 128, "trouser_block"), rng.normal(size=(4, 56))),
    (dense_model(60, 5, 64, "bodice_fit"), rng.normal(size=(4, 60))),
    (dense_model(8, 2, 32, "hem_length"), rng.normal(size=(4, 8))),
]
for garment in ["shirt", "blouse", "waistcoat", "jacket", "coat", "trousers",
                "skirt", "dress", "kilt", "cape"]:
    m = swatch_model()
    models.append((m, rng.normal(size=(4, 32, 32, 3))))
    n = notes_model()
    models.append((n, rng.integers(0, 500, size=(4, 20))))
shapes = []
for m, x in models:
    out = m.predict(x.astype(np.float32) if x.dtype.kind == "f" else x.astype(np.int32), verbose=0)
    shapes.append(f"{m.name}{tuple(out.shape)}")

print(f"startup_bolticor_kerseyn: TF {tf.__version__}, {len(devices)} physical / {len(logical)} logical devices, "
      f"{len(models)} models ready [{', '.join(shapes[:6])}, ...], wall {time.perf_counter() - T0:.1f}s")
