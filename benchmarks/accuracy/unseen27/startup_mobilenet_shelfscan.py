"""Quick environment check for the shelf-scanning product recogniser.

Prints library versions and devices, builds the MobileNetV3 backbone and runs a
smoke-test prediction on a few random images.
"""

import platform
import time

import numpy as np
import tensorflow as tf
import keras

IMAGE_SIZE = 224
N_IMAGES = 4
N_PRODUCTS = 50


def main():
    t0 = time.perf_counter()
    print(f"python      {platform.python_version()}")
    print(f"tensorflow  {tf.__version__}")
    print(f"keras       {keras.__version__}")
    print(f"numpy       {np.__version__}")
    print(f"built with CUDA: {tf.test.is_built_with_cuda()}")
    for kind in ("CPU", "GPU"):
        devices = tf.config.list_physical_devices(kind)
        print(f"{kind} devices: {[d.name for d in devices] or 'none'}")

    backbone = keras.applications.MobileNetV3Small(
        input_shape=(IMAGE_SIZE, IMAGE_SIZE, 3), include_top=False, weights=None, pooling="avg"
    )
    inputs = keras.Input(shape=(IMAGE_SIZE, IMAGE_SIZE, 3))
    features = backbone(inputs)
    outputs = keras.layers.Dense(N_PRODUCTS, activation="softmax", name="product")(features)
    model = keras.Model(inputs, outputs, name="shelfscan")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    print(f"model: {model.name}, {model.count_params():,} parameters, {len(model.layers)} layers")

    images = np.random.default_rng(0).uniform(0, 255, (N_IMAGES, IMAGE_SIZE, IMAGE_SIZE, 3))
    probs = model.predict(images.astype("float32"), verbose=0)
    top = probs.argmax(axis=1)
    print(f"smoke test predictions: {top.tolist()} (max prob {probs.max():.3f})")
    print(f"environment check done in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
