"""Radiology triage service: start-up self-check.

Before a chest X-ray triage worker accepts traffic it imports TensorFlow,
reports the visible devices and build information, builds the (untrained)
triage network, prints its summary and runs a smoke-test prediction on a few
synthetic studies.  There is no training.
"""
import time

T0 = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

IMG = 224
N_FINDINGS = 14


def conv_block(x, filters, stride):
    y = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = keras.layers.BatchNormalization()(y)
    y = keras.layers.ReLU()(y)
    y = keras.layers.SeparableConv2D(filters, 3, padding="same", use_bias=False)(y)
    y = keras.layers.BatchNormalization()(y)
    if stride != 1 or x.shape[-1] != filters:
        x = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(x)
    return keras.layers.ReLU()(keras.layers.Add()([x, y]))


def build_triage_net():
    inp = keras.Input((IMG, IMG, 1), name="xray")
    x = keras.layers.Rescaling(1.0 / 255)(inp)
    x = keras.layers.Conv2D(32, 7, strides=2, padding="same")(x)
    for filters, stride in [(32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1)]:
        x = conv_block(x, filters, stride)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_FINDINGS, activation="sigmoid", name="findings")(x)
    return keras.Model(inp, out, name="cxr_triage")


def main():
    t_import = time.perf_counter() - T0
    print(f"tensorflow {tf.__version__}, keras {keras.__version__}")
    print("built with CUDA:", tf.test.is_built_with_cuda())
    for d in tf.config.list_physical_devices():
        print("physical device:", d.name, d.device_type)
    for d in tf.config.list_logical_devices():
        print("logical device:", d.name)
    print("intra/inter op threads:", tf.config.threading.get_intra_op_parallelism_threads(),
          tf.config.threading.get_inter_op_parallelism_threads())

    model = build_triage_net()
    model.summary(line_length=100)
    studies = np.random.default_rng(0).integers(0, 256, size=(4, IMG, IMG, 1)).astype(np.float32)
    probs = model.predict(studies, verbose=0)
    top = probs.argmax(axis=1)
    print(f"startup: import {t_import:.1f}s, params {model.count_params()}, "
          f"smoke-test top findings {top.tolist()}, total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
