"""Inventory-forecast service warm-up check: import TensorFlow, report the
visible devices and build flags, build the forecasting model and run one
predict on a handful of store/SKU examples, then build the shelf-camera
MobileNetV2 (no pretrained weights) and run one predict on 4 images.
No training."""
import json, time

t0 = time.perf_counter()
import numpy as np
import tensorflow as tf
import keras

t_import = time.perf_counter() - t0


def build_forecaster(n_features=24, horizon=14):
    hist = keras.Input((28, n_features), name="history")
    store = keras.Input((1,), dtype="int32", name="store_id")
    s = keras.layers.Flatten()(keras.layers.Embedding(200, 8)(store))
    h = keras.layers.Conv1D(64, 5, padding="causal", activation="relu")(hist)
    h = keras.layers.GRU(64)(h)
    x = keras.layers.Concatenate()([h, s])
    x = keras.layers.Dense(128, activation="relu")(x)
    return keras.Model([hist, store], keras.layers.Dense(horizon, name="units_sold")(x))


def main():
    devices = {d.device_type: [] for d in tf.config.list_physical_devices()}
    for d in tf.config.list_physical_devices():
        devices[d.device_type].append(d.name)
    logical = [d.name for d in tf.config.list_logical_devices()]
    build = tf.sysconfig.get_build_info()
    model = build_forecaster()
    rng = np.random.default_rng(0)
    x = {"history": rng.normal(size=(4, 28, 24)).astype(np.float32),
         "store_id": rng.integers(0, 200, size=(4, 1)).astype(np.int32)}
    preds = model.predict(x, verbose=0)
    # shelf-camera model used by the same service (architecture only, no weights download)
    shelf = keras.applications.MobileNetV2(input_shape=(128, 128, 3), alpha=0.75, weights=None, classes=40)
    shelf_preds = shelf.predict(rng.random((4, 128, 128, 3), dtype=np.float32), verbose=0)
    info = {
        "tf": tf.__version__, "keras": keras.__version__, "physical": devices,
        "logical": logical, "cuda_build": bool(build.get("is_cuda_build", False)),
        "threads": [tf.config.threading.get_inter_op_parallelism_threads(),
                    tf.config.threading.get_intra_op_parallelism_threads()],
        "params": model.count_params(), "pred_shape": list(preds.shape),
        "shelf_params": shelf.count_params(), "shelf_pred_shape": list(shelf_preds.shape),
    }
    print(json.dumps(info))
    print(f"startup_devices_inventory: import {t_import:.1f}s, total {time.perf_counter()-t0:.1f}s")


if __name__ == "__main__":
    main()
