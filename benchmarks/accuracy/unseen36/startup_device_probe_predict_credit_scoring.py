"""Credit-scoring service start-up check: no training.

Imports TensorFlow, lists the physical/logical devices and build info,
builds the scoring MLP (with its feature normalisation layer adapted on a
small reference sample) and scores a handful of applications, as the
service does when a pod starts.
"""
import time

T0 = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras


def main():
    t_import = time.perf_counter() - T0
    devices = tf.config.list_physical_devices()
    logical = tf.config.list_logical_devices()
    info = tf.sysconfig.get_build_info()
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, "
          f"physical devices {[d.device_type for d in devices]}, logical {len(logical)}, "
          f"cuda build {info.get('is_cuda_build')}, threads intra={tf.config.threading.get_intra_op_parallelism_threads()}")

    rng = np.random.default_rng(0)
    reference = rng.normal([650, 42_000, 0.35, 7, 2], [80, 15_000, 0.15, 5, 1.5], size=(512, 5)).astype("float32")
    norm = keras.layers.Normalization()
    norm.adapt(reference)
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((5,)),
        norm,
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.summary(print_fn=lambda s, **kw: None)
    applicants = reference[:6]
    scores = model.predict(applicants, verbose=0)
    print("default probabilities:", np.round(scores.ravel(), 3).tolist())
    print(f"startup done: import {t_import:.1f}s, total {time.perf_counter() - T0:.1f}s, "
          f"{model.count_params()} params")


if __name__ == "__main__":
    main()
