"""Insurance policy-underwriting service warm-up (no training).

Startup-bound: lists devices, builds and compiles three small scoring models
(risk tier, premium regression, fraud flag), runs one predict each on a
handful of synthetic applications, and writes a small readiness manifest.
Writes nothing to ACCURACY_OUT.
"""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import keras

NFEAT = 24


def build(kind):
    inp = keras.Input((NFEAT,), name="application")
    x = keras.layers.Dense(32, activation="relu")(inp)
    x = keras.layers.Dense(16, activation="relu")(x)
    if kind == "risk_tier":
        out, loss = keras.layers.Dense(5, activation="softmax")(x), "sparse_categorical_crossentropy"
    elif kind == "premium":
        out, loss = keras.layers.Dense(1)(x), "mse"
    else:
        out, loss = keras.layers.Dense(1, activation="sigmoid")(x), "binary_crossentropy"
    m = keras.Model(inp, out, name=kind)
    m.compile(optimizer="adam", loss=loss)
    return m


def main():
    t_import = time.perf_counter() - WALL0
    devices = [d.device_type + ":" + d.name for d in tf.config.list_physical_devices()]
    rng = np.random.default_rng(68)
    apps = rng.normal(size=(4, NFEAT)).astype(np.float32)
    manifest = {"devices": devices, "models": {}}
    for kind in ("risk_tier", "premium", "fraud_flag"):
        t = time.perf_counter()
        m = build(kind)
        pred = m.predict(apps, verbose=0)
        manifest["models"][kind] = {"params": int(m.count_params()), "out_shape": list(pred.shape),
                                    "seconds": round(time.perf_counter() - t, 3)}
    root = tempfile.mkdtemp(prefix="u68_startup_warmcompile_policyunderwriting_")
    try:
        with open(os.path.join(root, "ready.json"), "w") as fh:
            json.dump(manifest, fh)
        size = os.path.getsize(os.path.join(root, "ready.json"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"[startup_warmcompile_policyunderwriting] devices={len(devices)} models=3 manifest_bytes={size} "
          f"import={t_import:.1f}s wall={time.perf_counter() - WALL0:.1f}s", flush=True)


if __name__ == "__main__":
    main()
