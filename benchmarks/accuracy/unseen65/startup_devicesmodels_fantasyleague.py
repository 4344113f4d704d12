"""Fantasy league: start-up/smoke script. Lists devices, builds and compiles three small models
(player points, lineup scorer, injury risk), runs one predict each and writes a small JSON report.

Trains nothing and writes nothing to ACCURACY_OUT; the whole cost is process start-up
(TensorFlow import, device discovery, model build, first-call tracing).
"""
import time
_T0 = time.perf_counter()
import json
import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 6509


def player_points():
    m = keras.Sequential([keras.Input((24,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m, np.random.default_rng(SEED).normal(size=(16, 24)).astype(np.float32)


def lineup_scorer():
    inp = keras.Input((9,), dtype="int32")
    x = keras.layers.Embedding(2000, 16)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m, np.random.default_rng(SEED).integers(0, 2000, (16, 9)).astype(np.int32)


def injury_risk():
    m = keras.Sequential([keras.Input((30, 4)), keras.layers.Conv1D(16, 3, activation="relu"),
                          keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m, np.random.default_rng(SEED).normal(size=(16, 30, 4)).astype(np.float32)


def main():
    tmp = tempfile.mkdtemp(prefix="u65_startup_devicesmodels_fantasyleague_")
    try:
        t_import = time.perf_counter() - _T0
        devices = [d.name for d in tf.config.list_physical_devices()]
        report = {"tf": tf.__version__, "keras": keras.__version__, "devices": devices, "models": {}}
        for name, fn in (("player_points", player_points), ("lineup_scorer", lineup_scorer),
                         ("injury_risk", injury_risk)):
            t = time.perf_counter()
            model, x = fn()
            pred = model.predict(x, verbose=0)
            report["models"][name] = {"params": int(model.count_params()), "pred_mean": float(np.mean(pred)),
                                      "seconds": round(time.perf_counter() - t, 3)}
        with open(os.path.join(tmp, "smoke_report.json"), "w") as f:
            json.dump(report, f, indent=1)
        print(f"[fantasyleague] startup smoke: import {t_import:.1f}s, devices {devices}, "
              f"{len(report['models'])} models built+predicted, total {time.perf_counter() - _T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
