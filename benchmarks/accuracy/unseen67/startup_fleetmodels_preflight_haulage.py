"""Preflight check for a road-haulage fleet model service (logistics).

Trains nothing: lists devices, builds and compiles three small models (ETA
regressor, fuel-burn regressor, load-type classifier), runs one predict on
each, and writes a small JSON preflight report to a temp dir.
Known bottleneck: process startup (TF import, graph building); no training.
"""
import time
_T0 = time.perf_counter()
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import keras
_T_IMPORT = time.perf_counter() - _T0


def eta_model():
    inp = keras.Input((24,))
    x = keras.layers.Dense(128, activation="relu")(inp)
    x = keras.layers.Dense(64, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x), name="eta")
    m.compile(optimizer="adam", loss="mse")
    return m


def fuel_model():
    inp = keras.Input((96, 6))
    x = keras.layers.Flatten()(inp)
    x = keras.layers.Dense(32, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x), name="fuel")
    m.compile(optimizer="adam", loss="huber")
    return m


def loadtype_model():
    inp = keras.Input((32,), dtype="int32")
    x = keras.layers.Embedding(500, 32)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    m = keras.Model(inp, keras.layers.Dense(6)(x), name="loadtype")
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u67_startup_fleetmodels_preflight_haulage_")
    try:
        rng = np.random.default_rng(0)
        report = {"devices": [d.name for d in tf.config.list_physical_devices()],
                  "tf": tf.__version__, "keras": keras.__version__, "models": {}}
        inputs = {"eta": rng.standard_normal((8, 24)).astype("float32"),
                  "fuel": rng.standard_normal((8, 96, 6)).astype("float32"),
                  "loadtype": rng.integers(0, 500, (8, 32)).astype("int32")}
        for build in (eta_model, fuel_model, loadtype_model):
            t = time.perf_counter()
            m = build()
            out = m.predict(inputs[m.name], verbose=0)
            report["models"][m.name] = {"params": int(m.count_params()),
                                        "out_shape": list(out.shape),
                                        "seconds": round(time.perf_counter() - t, 3)}
        with open(os.path.join(tmp, "preflight.json"), "w") as f:
            json.dump(report, f, indent=1)
        print("[fleetmodels] preflight ok models=%d devices=%d import_s=%.1f models_s=%.1f wall_s=%.1f" % (
            len(report["models"]), len(report["devices"]), _T_IMPORT,
            sum(v["seconds"] for v in report["models"].values()), time.perf_counter() - _T0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
