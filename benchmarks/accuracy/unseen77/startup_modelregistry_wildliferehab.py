"""Wildlife rehabilitation centre model-registry preflight (u77).

Domain: a wildlife rescue and rehabilitation centre deploys small triage
models (intake species ID from a photo, body-condition score from
morphometrics, release-readiness from daily observations). Before the ward
tablets go live, this preflight lists devices, builds and compiles every
registered model, runs one prediction each and writes a JSON manifest.
Trains nothing; startup cost only (TF import, device listing, graph
building, first-call tracing). Writes nothing to ACCURACY_OUT.
"""
import time

_WALL0 = time.perf_counter()

import json
import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras


def intake_species():
    return keras.Sequential([
        keras.Input((96, 96, 3)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(40, activation="softmax"),
    ], name="intake_species")


def body_condition():
    inp = keras.Input((12,))
    h = keras.layers.Dense(64, activation="relu")(inp)
    h = keras.layers.Dense(32, activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(9)(h), name="body_condition")


def release_readiness():
    inp = keras.Input((14, 8))
    h = keras.layers.Conv1D(16, 3, activation="relu")(inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(h), name="release_readiness")


def main():
    devices = [d.name for d in tf.config.list_physical_devices()]
    logical = [d.name for d in tf.config.list_logical_devices()]
    rng = np.random.default_rng(7709)
    manifest = {"physical_devices": devices, "logical_devices": logical, "models": []}
    for builder, loss in ((intake_species, "sparse_categorical_crossentropy"),
                          (body_condition, "mse"), (release_readiness, "binary_crossentropy")):
        t0 = time.perf_counter()
        m = builder()
        m.compile(optimizer="adam", loss=loss)
        shape = (1,) + tuple(m.input_shape[1:])
        out = m.predict(rng.normal(size=shape).astype(np.float32), verbose=0)
        manifest["models"].append({"name": m.name, "params": int(m.count_params()),
                                   "output_shape": list(out.shape),
                                   "ready_s": round(time.perf_counter() - t0, 3)})
    tmp = tempfile.mkdtemp(prefix="u77_startup_modelregistry_wildliferehab_")
    try:
        path = os.path.join(tmp, "preflight_manifest.json")
        with open(path, "w") as fh:
            json.dump(manifest, fh, indent=1)
        size = os.path.getsize(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("startup_modelregistry_wildliferehab: %d devices, %d models ready, manifest %d bytes, wall %.1f s"
          % (len(devices), len(manifest["models"]), size, time.perf_counter() - _WALL0), flush=True)


if __name__ == "__main__":
    main()
