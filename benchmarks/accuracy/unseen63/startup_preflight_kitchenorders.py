"""Restaurant kitchen display: preflight check for the order-routing models.

Trains nothing. Imports TensorFlow, lists devices, builds and compiles three
small models (prep-time regressor, station router, ticket-delay classifier),
runs one predict on each with a dummy order batch, and writes a small JSON
preflight report to a temp dir (removed at exit). Writes nothing to
ACCURACY_OUT. The cost is import, device discovery and graph/function build.
"""
import time
T0 = time.perf_counter()
import json, os, shutil, tempfile
import numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras


def prep_time_model():
    inp = keras.Input((24,))
    x = keras.layers.Dense(64, activation="relu")(inp)
    return keras.Model(inp, keras.layers.Dense(1)(x), name="prep_time")


def station_router():
    inp = keras.Input((12,), dtype="int32")
    x = keras.layers.Embedding(500, 16)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(6, activation="softmax")(x), name="station_router")


def delay_classifier():
    inp = keras.Input((20, 8))
    x = keras.layers.Conv1D(16, 3, activation="relu")(inp)
    x = keras.layers.GlobalMaxPooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(x), name="delay_clf")


def main():
    root = tempfile.mkdtemp(prefix="u63_startup_preflight_kitchenorders_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        logical = [d.name for d in tf.config.list_logical_devices()]
        rng = np.random.default_rng(63)
        report = {"tf": tf.__version__, "keras": keras.__version__, "devices": devices, "logical": logical,
                  "models": {}}
        for build, x, loss in ((prep_time_model, rng.normal(size=(8, 24)).astype("float32"), "mse"),
                               (station_router, rng.integers(0, 500, size=(8, 12)).astype("int32"),
                                "sparse_categorical_crossentropy"),
                               (delay_classifier, rng.normal(size=(8, 20, 8)).astype("float32"),
                                "binary_crossentropy")):
            t = time.perf_counter()
            m = build()
            m.compile(optimizer="adam", loss=loss)
            out = m.predict_on_batch(x)
            report["models"][m.name] = {"params": int(m.count_params()), "out_shape": list(out.shape),
                                        "seconds": round(time.perf_counter() - t, 3)}
        with open(os.path.join(root, "preflight.json"), "w") as f:
            json.dump(report, f, indent=1)
        print(f"[startup] devices={devices} models={list(report['models'])} "
              f"wall {time.perf_counter() - T0:.1f}s", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
