import time; T0 = time.perf_counter()
"""Ranger station kiosk service warm-up: no training at all.

Imports TensorFlow, lists the visible devices, builds and compiles the three
models the station software serves (a patrol-report text classifier, a
MobileNetV2 trail-camera image tagger and a river-gauge forecaster) and
runs one predict on each to make sure they answer. Nothing is trained and nothing is written to ACCURACY_OUT.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

T_IMPORT = time.perf_counter()


def build_report_classifier():
    inp = keras.Input((120,), dtype="int32")
    x = keras.layers.Embedding(20000, 64)(inp)
    x = keras.layers.Bidirectional(keras.layers.LSTM(64))(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(6, activation="softmax", name="incident_type")(x)
    model = keras.Model(inp, out, name="patrol_report_classifier")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def build_camera_tagger():
    backbone = keras.applications.MobileNetV2(input_shape=(96, 96, 3), include_top=False,
                                              weights=None, alpha=0.75)
    inp = keras.Input((96, 96, 3))
    x = keras.layers.GlobalAveragePooling2D()(backbone(inp))
    out = keras.layers.Dense(8, activation="softmax", name="species")(x)
    model = keras.Model(inp, out, name="trailcam_tagger")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def build_gauge_forecaster():
    inp = keras.Input((96, 4))
    x = keras.layers.GRU(64, return_sequences=True)(inp)
    x = keras.layers.GRU(64)(x)
    out = keras.layers.Dense(24, name="stage_next_6h")(x)
    model = keras.Model(inp, out, name="gauge_forecaster")
    model.compile(optimizer="adam", loss="mse")
    return model


def main():
    devices = tf.config.list_physical_devices()
    logical = tf.config.list_logical_devices()
    reports = build_report_classifier()
    tagger = build_camera_tagger()
    gauges = build_gauge_forecaster()
    T_BUILD = time.perf_counter()
    rng = np.random.default_rng(82)
    p1 = reports.predict(rng.integers(1, 20000, (4, 120)).astype("int32"), verbose=0)
    p2 = tagger.predict(rng.random((4, 96, 96, 3), dtype=np.float32), verbose=0)
    p3 = gauges.predict(rng.random((4, 96, 4), dtype=np.float32), verbose=0)
    T_END = time.perf_counter()
    print(f"rangerstation startup: devices={[d.device_type for d in devices]} "
          f"logical={len(logical)} params={reports.count_params() + tagger.count_params() + gauges.count_params()} "
          f"preds={p1.shape},{p2.shape},{p3.shape} import {T_IMPORT - T0:.1f} s, build {T_BUILD - T_IMPORT:.1f} s, "
          f"predict {T_END - T_BUILD:.1f} s, wall {T_END - T0:.1f} s")


if __name__ == "__main__":
    main()
