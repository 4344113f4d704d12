"""Nail-polish lab tooling start-up: import TensorFlow, check devices, build models.

The QC notebook for nail-polish batches imports TensorFlow, lists the
available devices, builds and compiles a viscosity-curve regressor and a
shade-chip classifier, and runs one smoke-test prediction.  Nothing is
trained and nothing is written.
"""
import time; T0 = time.perf_counter()
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

T_IMPORT = time.perf_counter() - T0
devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()


def viscosity_regressor():
    # shear-rate sweep (64 shear rates x [shear stress, viscosity, temperature])
    inp = keras.Input((64, 3), name="shear_sweep")
    h = layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    h = layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = layers.Bidirectional(layers.GRU(48))(h)
    h = layers.Dense(64, activation="relu")(h)
    out = {"yield_stress": layers.Dense(1, name="yield_stress")(h),
           "thixotropy": layers.Dense(1, name="thixotropy")(h)}
    m = keras.Model(inp, out, name="viscosity_regressor")
    m.compile(optimizer="adam", loss={"yield_stress": "mse", "thixotropy": "mse"})
    return m


def shade_chip_classifier():
    inp = keras.Input((96, 96, 3), name="shade_chip")
    h = layers.Rescaling(1 / 255.0)(inp)
    for f in (32, 64, 128):
        h = layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = layers.BatchNormalization()(h)
        h = layers.MaxPooling2D()(h)
    h = layers.GlobalAveragePooling2D()(h)
    out = layers.Dense(24, activation="softmax", name="shade")(h)
    m = keras.Model(inp, out, name="shade_chip_classifier")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


keras.utils.set_random_seed(88)
visc = viscosity_regressor()
chips = shade_chip_classifier()
probe = np.random.default_rng(88).integers(0, 255, (8, 96, 96, 3)).astype(np.float32)
pred = chips.predict(probe, verbose=0)
sweep = np.random.default_rng(89).normal(size=(16, 64, 3)).astype(np.float32)
visc_pred = visc.predict(sweep, verbose=0)
# candidate backbone for the shade-chip camera (random init, no download)
backbone = keras.applications.MobileNetV2(weights=None, input_shape=(128, 128, 3), classes=24)
backbone.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
bb_pred = backbone.predict(np.zeros((4, 128, 128, 3), np.float32), verbose=0)
# second candidate backbone, compared on parameter count and one smoke batch
alt = keras.applications.EfficientNetB0(weights=None, input_shape=(128, 128, 3), classes=24)
alt.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
alt_pred = alt.predict(np.zeros((2, 128, 128, 3), np.float32), verbose=0)
print(f"[nailpolish] import {T_IMPORT:.1f}s, devices {[d.device_type for d in devices]}, "
      f"params {visc.count_params() + chips.count_params() + backbone.count_params()} / alt {alt.count_params()}, smoke pred {pred.shape}, "
      f"wall {time.perf_counter() - T0:.1f}s")
