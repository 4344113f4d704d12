"""Ceilometer cloud-base service: cold start of the inference/training service.

Imports TensorFlow, lists the devices, builds and compiles the two models the service uses
(a deep residual 1-D CNN over laser backscatter profiles for cloud-base height, and a small
fog/precipitation classifier), runs one warm-up predict, and exits without training.
"""
import time; T0 = time.perf_counter()
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

GATES = 1024          # 15 m range gates up to ~15 km
N_BLOCKS = 40


def residual_block(x, ch, k, name):
    y = keras.layers.Conv1D(ch, k, padding="same", name=f"{name}_c1")(x)
    y = keras.layers.BatchNormalization(name=f"{name}_bn1")(y)
    y = keras.layers.Activation("relu", name=f"{name}_r1")(y)
    y = keras.layers.Conv1D(ch, k, padding="same", name=f"{name}_c2")(y)
    y = keras.layers.BatchNormalization(name=f"{name}_bn2")(y)
    if x.shape[-1] != ch:
        x = keras.layers.Conv1D(ch, 1, name=f"{name}_proj")(x)
    return keras.layers.Activation("relu", name=f"{name}_out")(keras.layers.Add(name=f"{name}_add")([x, y]))


def cloud_base_model():
    inp = keras.Input(shape=(GATES, 2), name="backscatter")
    x = keras.layers.Conv1D(32, 9, padding="same", activation="relu")(inp)
    for b in range(N_BLOCKS):
        x = residual_block(x, 32 * (1 + b // 8), 5, f"blk{b:02d}")
        if b % 8 == 7:
            x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    heights = keras.layers.Dense(3, name="cbh_layers")(x)
    cover = keras.layers.Dense(9, activation="softmax", name="okta")(x)
    m = keras.Model(inp, [heights, cover], name="cloud_base")
    m.compile(optimizer="adam", loss=["mse", "sparse_categorical_crossentropy"])
    return m


def fog_model():
    inp = keras.Input(shape=(GATES // 8, 2))
    x = keras.layers.Conv1D(32, 5, activation="relu")(inp)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(4, activation="softmax")(x), name="fog_precip")
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


devices = tf.config.list_physical_devices()
t_build = time.perf_counter()
cbh = cloud_base_model()
fog = fog_model()
build_s = time.perf_counter() - t_build
profile = np.random.default_rng(7909).lognormal(-2, 1, (4, GATES, 2)).astype(np.float32)
t_pred = time.perf_counter()
heights, cover = cbh.predict(profile, verbose=0)
pred_s = time.perf_counter() - t_pred
print(f"ceilometer coldstart: devices={[d.device_type for d in devices]} params={cbh.count_params()+fog.count_params()} "
      f"build {build_s:.1f}s warmup predict {pred_s:.1f}s wall {time.perf_counter()-T0:.1f}s")
