"""Startup-only script: a municipal building-permit routing service warms up.

Lists devices, builds and compiles three small Keras models (a tabular
triage MLP, a text-hash classifier, a 1-D conv over form-field sequences),
runs one predict on each, writes a tiny JSON manifest to a temp dir and
removes it. Trains nothing and writes nothing to ACCURACY_OUT.
Deliberate bottleneck: process startup (TensorFlow import, graph building).
"""
import time
T0 = time.perf_counter()
import json, os, shutil, tempfile
import numpy as np
import tensorflow as tf
import keras


def triage():
    m = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(5, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m, np.random.default_rng(1).normal(size=(16, 32)).astype(np.float32)


def texthash():
    m = keras.Sequential([keras.Input((2048,)), keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dropout(0.2), keras.layers.Dense(12, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m, (np.random.default_rng(2).random((16, 2048)) < 0.01).astype(np.float32)


def formconv():
    inp = keras.Input((60,), dtype="int32")
    x = keras.layers.Embedding(500, 32)(inp)
    x = keras.layers.Conv1D(64, 3, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    m = keras.Model(inp, keras.layers.Dense(3, activation="softmax")(x))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m, np.random.default_rng(3).integers(0, 500, size=(16, 60)).astype(np.int32)


def main():
    tmp = tempfile.mkdtemp(prefix="u62_startup_modelzoo_permitrouter_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        manifest = {"devices": devices, "models": {}}
        for name, fn in (("triage", triage), ("texthash", texthash), ("formconv", formconv)):
            m, x = fn()
            p = m.predict(x, verbose=0)
            manifest["models"][name] = {"params": int(m.count_params()), "out": list(p.shape)}
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        print(f"startup_modelzoo_permitrouter: devices={devices}, models={list(manifest['models'])}, "
              f"wall {time.perf_counter()-T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
