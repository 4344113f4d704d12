"""Environment check before a training job: devices, threading config,
and a few candidate architectures built, compiled and smoke-tested.
No training happens here."""

import argparse
import platform

import keras
import numpy as np
import tensorflow as tf


def describe_environment():
    print(
        "python",
        platform.python_version(),
        "| tensorflow",
        tf.__version__,
        "| keras",
        keras.__version__,
    )
    print("built with CUDA:", tf.test.is_built_with_cuda())
    for dev in tf.config.list_physical_devices():
        print("physical device:", dev.device_type, dev.name)
    for dev in tf.config.list_logical_devices():
        print("logical device:", dev.name)
    print("intra-op threads:", tf.config.threading.get_intra_op_parallelism_threads())
    print("inter-op threads:", tf.config.threading.get_inter_op_parallelism_threads())
    print("float policy:", keras.mixed_precision.global_policy().name)
    print("eager:", tf.executing_eagerly())


def candidates():
    apps = keras.applications
    return {
        "mobilenet_v2": lambda: apps.MobileNetV2(
            input_shape=(160, 160, 3), weights=None, classes=10
        ),
        "resnet50": lambda: apps.ResNet50(input_shape=(160, 160, 3), weights=None, classes=10),
        "efficientnet_b0": lambda: apps.EfficientNetB0(
            input_shape=(160, 160, 3), weights=None, classes=10
        ),
        "densenet121": lambda: apps.DenseNet121(
            input_shape=(160, 160, 3), weights=None, classes=10
        ),
        "inception_v3": lambda: apps.InceptionV3(
            input_shape=(160, 160, 3), weights=None, classes=10
        ),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--truth", action="store_true", help="accepted for symmetry; nothing to measure"
    )
    parser.parse_args()

    describe_environment()
    probe = np.random.default_rng(0).random((2, 160, 160, 3), dtype=np.float32)
    for name, make in candidates().items():
        model = make()
        model.compile(
            optimizer=keras.optimizers.Adam(1e-3),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
        )
        n_params = model.count_params()
        print(f"{name}: {len(model.layers)} layers, {n_params / 1e6:.2f} M params")
        if name == "mobilenet_v2":
            model.summary(line_length=100)
        preds = model.predict(probe, verbose=0)
        print(f"{name}: predict ok, output {preds.shape}, sums {preds.sum(axis=1).round(3)}")
        keras.backend.clear_session()


if __name__ == "__main__":
    main()
