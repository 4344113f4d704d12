"""Smoke test for the plant-disease leaf classifier service: environment check,
model construction and a prediction on a few random leaf crops."""

import platform
import time

t_start = time.perf_counter()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

IMG_SIZE = 128
N_CLASSES = 38
N_IMAGES = 4


def configure_devices():
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    print(
        f"python {platform.python_version()}  tensorflow {tf.__version__}  keras {keras.__version__}"
    )
    print(f"built with CUDA: {tf.test.is_built_with_cuda()}")
    print(f"CPUs: {len(tf.config.list_physical_devices('CPU'))}  GPUs: {len(gpus)}")


def build_classifier():
    backbone = keras.applications.MobileNetV2(
        input_shape=(IMG_SIZE, IMG_SIZE, 3), include_top=False, weights=None, alpha=0.75
    )
    inp = keras.Input((IMG_SIZE, IMG_SIZE, 3))
    x = keras.applications.mobilenet_v2.preprocess_input(inp)
    x = backbone(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out, name="leaf_classifier")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main():
    configure_devices()
    model = build_classifier()
    model.summary(line_length=100, expand_nested=False)
    images = np.random.default_rng(0).uniform(0, 255, (N_IMAGES, IMG_SIZE, IMG_SIZE, 3))
    probs = model.predict(images.astype("float32"), batch_size=N_IMAGES, verbose=0)
    for i, p in enumerate(probs):
        print(f"leaf {i}: class={int(np.argmax(p))} p={float(np.max(p)):.3f}")
    print(
        f"params={model.count_params():,}  total {time.perf_counter() - t_start:.1f}s since start"
    )


if __name__ == "__main__":
    main()
