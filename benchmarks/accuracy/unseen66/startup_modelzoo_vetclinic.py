"""Veterinary clinic service preflight: lists devices, builds and compiles three
small models (triage tabular MLP, radiograph CNN, heart-sound Conv1D), runs one
predict each and writes a small JSON manifest. Trains nothing; deliberate
bottleneck: startup (import, graph build, first-call tracing)."""
import os, sys, time, json, tempfile, shutil
T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def triage():
    m = keras.Sequential([keras.Input((24,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(5, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    return m, np.random.default_rng(1).normal(size=(8, 24)).astype("float32")


def radiograph():
    m = keras.Sequential([keras.Input((64, 64, 1)), keras.layers.Conv2D(16, 3, activation="relu"),
                          keras.layers.MaxPooling2D(), keras.layers.Conv2D(32, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(2, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    return m, np.random.default_rng(2).random((4, 64, 64, 1)).astype("float32")


def heartsound():
    m = keras.Sequential([keras.Input((2000, 1)), keras.layers.Conv1D(16, 15, strides=4, activation="relu"),
                          keras.layers.Conv1D(32, 9, strides=4, activation="relu"),
                          keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(3, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    return m, np.random.default_rng(3).normal(size=(4, 2000, 1)).astype("float32")


def main():
    keras.utils.set_random_seed(66)
    tmp = tempfile.mkdtemp(prefix="u66_startup_modelzoo_vetclinic_")
    try:
        devs = [d.name for d in tf.config.list_physical_devices()]
        manifest = {"devices": devs, "tf": tf.__version__, "keras": keras.__version__, "models": {}}
        for name, fn in (("triage", triage), ("radiograph", radiograph), ("heartsound", heartsound)):
            m, x = fn()
            p = m.predict(x, verbose=0)
            manifest["models"][name] = {"params": int(m.count_params()), "out": list(p.shape)}
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        print(f"[startup_modelzoo_vetclinic] devices {devs} models {list(manifest['models'])} "
              f"wall {time.perf_counter()-T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
