"""Irrigation-scheduling model preflight (startup only, trains nothing).

Lists devices, builds and compiles three small candidate models (ET0
regressor, soil-water-balance MLP, canopy-image CNN), runs one predict on a
tiny batch each, and writes a small JSON preflight report to a temp dir.
Nothing is written to ACCURACY_OUT.
"""
import time
WALL0 = time.perf_counter()
import os
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 58


def et0_model():
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dense(1)])


def swb_model():
    return keras.Sequential([keras.Input((14, 6)), keras.layers.Flatten(),
                             keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])


def canopy_model():
    return keras.Sequential([keras.Input((32, 32, 3)), keras.layers.Conv2D(8, 3, activation="relu"),
                             keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3, activation="softmax")])


tmp = tempfile.mkdtemp(prefix="u58_startup_preflight_irrigationmodels_")
try:
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    report = {"tf": tf.__version__, "keras": keras.__version__,
              "devices": [d.name for d in tf.config.list_physical_devices()],
              "logical": [d.name for d in tf.config.list_logical_devices()], "models": {}}
    for name, fn, shape in [("et0", et0_model, (4, 8)), ("swb", swb_model, (4, 14, 6)),
                            ("canopy", canopy_model, (4, 32, 32, 3))]:
        t = time.perf_counter()
        m = fn()
        m.compile(optimizer="adam", loss="mse")
        out = m.predict(rng.normal(0, 1, shape).astype(np.float32), verbose=0)
        report["models"][name] = {"params": int(m.count_params()), "out": list(out.shape),
                                  "seconds": round(time.perf_counter() - t, 3)}
    path = os.path.join(tmp, "preflight.json")
    with open(path, "w") as fh:
        json.dump(report, fh, indent=1)
    print(f"startup_preflight_irrigationmodels: {len(report['models'])} models ok, "
          f"{len(report['devices'])} devices, report {os.path.getsize(path)} bytes, "
          f"wall {time.perf_counter()-WALL0:.1f} s")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
