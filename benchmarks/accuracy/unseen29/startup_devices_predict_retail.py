"""Shelf-image SKU recogniser: environment check before deployment.

Imports TensorFlow, lists the visible devices and build info, builds the
recogniser (a MobileNetV2 backbone, random weights, plus a SKU head), prints a
summary and runs a predict on a handful of synthetic shelf crops. No training.
"""
import time

T0 = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

N_SKUS = 500


def main():
    devices = tf.config.list_physical_devices()
    print("devices:", [d.name for d in devices])
    print("built with CUDA:", tf.test.is_built_with_cuda())
    print("logical CPUs:", len(tf.config.list_logical_devices("CPU")))
    keras.utils.set_random_seed(0)
    backbone = keras.applications.MobileNetV2(input_shape=(224, 224, 3), include_top=False,
                                              weights=None, pooling="avg")
    inp = keras.Input((224, 224, 3))
    x = keras.layers.Rescaling(1 / 127.5, offset=-1)(inp)
    x = backbone(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_SKUS, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.summary(print_fn=lambda s, **kw: None)
    print("parameters:", model.count_params())
    crops = np.random.default_rng(0).integers(0, 255, (8, 224, 224, 3)).astype(np.float32)
    probs = model.predict(crops, batch_size=8, verbose=0)
    print("top SKU per crop:", probs.argmax(axis=1).tolist())
    print(f"retail startup check done in {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
