"""Start-up check for a pharmacy stock-out forecasting service.

Imports TensorFlow, lists the visible devices and threading setup, builds
the forecasting model and scores a handful of example store/SKU rows. No
training happens.
"""
import time

T0 = time.perf_counter()

import numpy as np
import tensorflow as tf
import keras

N_SKU_FEATURES = 32
HISTORY = 28


def build_forecaster():
    history = keras.Input((HISTORY, 1), name="daily_units")
    meta = keras.Input((N_SKU_FEATURES,), name="sku_meta")
    h = keras.layers.LSTM(64)(history)
    m = keras.layers.Dense(32, activation="relu")(meta)
    z = keras.layers.Concatenate()([h, m])
    z = keras.layers.Dense(64, activation="relu")(z)
    out = keras.layers.Dense(1, activation="sigmoid", name="stockout_prob")(z)
    return keras.Model([history, meta], out)


def main():
    t_import = time.perf_counter() - T0
    devices = tf.config.list_physical_devices()
    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    for d in devices:
        print(f"  device: {d.device_type} {d.name}")
    print(f"  GPUs: {len(tf.config.list_physical_devices('GPU'))}, "
          f"intra-op threads: {tf.config.threading.get_intra_op_parallelism_threads()}, "
          f"built with CUDA: {tf.test.is_built_with_cuda()}")
    model = build_forecaster()
    model.summary(print_fn=lambda s, **kw: None)
    rng = np.random.default_rng(0)
    hist = rng.poisson(4.0, (8, HISTORY, 1)).astype(np.float32)
    meta = rng.normal(size=(8, N_SKU_FEATURES)).astype(np.float32)
    probs = model.predict([hist, meta], verbose=0).ravel()
    # the serving container rebuilds the model from its JSON config; check that round trip too
    clone = keras.models.model_from_json(model.to_json())
    clone.set_weights(model.get_weights())
    same = np.allclose(clone.predict([hist, meta], verbose=0).ravel(), probs, atol=1e-5)
    print(f"  config round trip reproduces predictions: {same}")
    # latency probe over the batch sizes the service sees
    for n in (1, 16, 128, 1024):
        h = rng.poisson(4.0, (n, HISTORY, 1)).astype(np.float32)
        m = rng.normal(size=(n, N_SKU_FEATURES)).astype(np.float32)
        t = time.perf_counter()
        model.predict([h, m], batch_size=n, verbose=0)
        print(f"  predict batch {n:5d}: {1000 * (time.perf_counter() - t):.1f} ms")
    print("  example stock-out probabilities:", np.round(probs, 3).tolist())
    print(f"startup probe: import {t_import:.1f}s, params {model.count_params()}, "
          f"total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
