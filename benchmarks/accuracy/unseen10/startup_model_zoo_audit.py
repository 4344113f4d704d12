"""Model-zoo audit: what would each backbone cost us on this machine?

Before picking a backbone for an edge-deployment project, this script imports
TensorFlow, reports the visible devices and build info, then instantiates a handful
of ``keras.applications`` architectures (random weights - no downloads), prints
parameter counts, layer counts and estimated weight memory, and runs a single
``predict`` on a dummy image to check output shapes. No training happens.

Run ``python startup_model_zoo_audit.py``.
"""

import platform
import time

import keras
import numpy as np
import tensorflow as tf

BACKBONES = {
    "MobileNetV2": (keras.applications.MobileNetV2, 224),
    "MobileNetV3Small": (keras.applications.MobileNetV3Small, 224),
    "EfficientNetB0": (keras.applications.EfficientNetB0, 224),
    "ResNet50": (keras.applications.ResNet50, 224),
    "DenseNet121": (keras.applications.DenseNet121, 224),
    "InceptionV3": (keras.applications.InceptionV3, 299),
}


def describe_environment():
    print(
        f"python {platform.python_version()}  tensorflow {tf.__version__}  keras {keras.__version__}"
    )
    for device in tf.config.list_physical_devices():
        print(f"  physical device: {device.device_type:4s} {device.name}")
    print(f"  GPUs visible: {len(tf.config.list_physical_devices('GPU'))}")
    info = tf.sysconfig.get_build_info()
    print(f"  built with CUDA: {info.get('is_cuda_build', False)}")
    print(f"  intra-op threads: {tf.config.threading.get_intra_op_parallelism_threads()}")


def audit(name, constructor, size):
    t0 = time.perf_counter()
    model = constructor(weights=None, input_shape=(size, size, 3), classes=10)
    built = time.perf_counter() - t0
    params = model.count_params()
    dummy = np.random.rand(1, size, size, 3).astype(np.float32)
    t1 = time.perf_counter()
    out = model.predict(dummy, verbose=0)
    first_predict = time.perf_counter() - t1
    print(
        f"{name:17s} layers={len(model.layers):4d} params={params / 1e6:6.2f}M "
        f"weights={params * 4 / 2**20:6.1f} MiB build={built:5.2f}s "
        f"first_predict={first_predict:5.2f}s out={tuple(out.shape)}"
    )
    keras.backend.clear_session()
    return params


def main():
    start = time.perf_counter()
    describe_environment()
    totals = {name: audit(name, ctor, size) for name, (ctor, size) in BACKBONES.items()}
    smallest = min(totals, key=totals.get)
    print(f"smallest backbone: {smallest}; audit took {time.perf_counter() - start:.1f}s")


if __name__ == "__main__":
    main()
