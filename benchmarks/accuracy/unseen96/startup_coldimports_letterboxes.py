"""Letterbox collection schedules: cold start of the collection-round service.

Imports TensorFlow, lists devices, builds and compiles two models (a collection-time
regressor on schedule rows and an EfficientNetB0 letterbox-condition classifier for
the photos collectors take, random init) and runs one predict on a few letterbox photos. Trains nothing and writes nothing to ACCURACY_OUT.
Known bottleneck: start-up (imports, graph/kernel set-up).
"""
import time; T0 = time.perf_counter()
import os
import sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

T_IMPORT = time.perf_counter() - T0

N_SLOTS = 28     # 7 days x 4 collection slots
FEAT = 40
PHOTO = 160


def build_time_regressor():
    inp = keras.Input((FEAT,), name="letterbox_features")
    h = keras.layers.Dense(256, activation="relu")(inp)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(N_SLOTS, name="collection_minutes")(h)
    m = keras.Model(inp, out, name="collection_time")
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def build_condition_classifier():
    # condition of the box in the collector's photo: ok, damaged, blocked, sealed
    m = keras.applications.EfficientNetB0(weights=None, input_shape=(PHOTO, PHOTO, 3), classes=4)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
keras.utils.set_random_seed(96)
reg = build_time_regressor()
clf = build_condition_classifier()
photos = np.random.default_rng(96).uniform(0, 255, (4, PHOTO, PHOTO, 3)).astype(np.float32)
condition = clf.predict(photos, verbose=0)
print(f"letterboxes startup: import {T_IMPORT:.1f} s, devices {[d.device_type for d in devices]} "
      f"({len(logical)} logical), params {reg.count_params()}+{clf.count_params()}, "
      f"predict shape {condition.shape}, wall {time.perf_counter()-T0:.1f} s")
