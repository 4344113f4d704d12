"""Pre-flight check for a retail shelf-inventory image model deployment.

Imports TensorFlow, reports the build and the visible devices, builds the
shelf-product classifier (a MobileNetV2 trunk without pretrained weights plus
a small head), prints its size and runs one prediction on a handful of
synthetic shelf crops.  No training happens.
"""
import os, time
t0 = time.perf_counter()
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

N_PRODUCTS = 120


def main():
    t_import = time.perf_counter() - t0
    info = tf.sysconfig.get_build_info()
    print("tensorflow", tf.__version__, "keras", keras.__version__, "cuda build:", info.get("is_cuda_build"))
    for dev in tf.config.list_physical_devices():
        print("physical device:", dev.device_type, dev.name)
    print("logical devices:", [d.name for d in tf.config.list_logical_devices()])
    print("GPU available:", bool(tf.config.list_physical_devices("GPU")))
    with tf.device("/CPU:0"):
        probe = tf.linalg.matmul(tf.random.normal((256, 256)), tf.random.normal((256, 256)))
    print("matmul probe ok on", probe.device)

    keras.utils.set_random_seed(0)
    trunk = keras.applications.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights=None,
                                           alpha=1.0)
    inp = keras.Input((160, 160, 3))
    h = keras.layers.Rescaling(1 / 127.5, offset=-1)(inp)
    h = trunk(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dropout(0.2)(h)
    model = keras.Model(inp, keras.layers.Dense(N_PRODUCTS, activation="softmax")(h), name="shelf_classifier")
    print("model params: %d" % model.count_params())

    crops = np.random.default_rng(0).integers(0, 255, (4, 160, 160, 3)).astype("float32")
    probs = model.predict(crops, verbose=0)
    print("predicted product ids:", probs.argmax(axis=1).tolist())
    print("startup_devicecheck_inventory: import %.1f s, total %.1f s" % (t_import, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
