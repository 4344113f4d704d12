"""Zoning-code compliance service preflight: lists devices, builds and compiles three small
models (setback regressor, land-use classifier, height-limit checker), runs one predict each and
writes a small preflight manifest. Trains nothing and writes nothing to ACCURACY_OUT."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def setback_model():
    m = keras.Sequential([keras.Input((12,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def landuse_model():
    m = keras.Sequential([keras.Input((16, 16, 3)), keras.layers.Conv2D(8, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(6)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def height_model():
    m = keras.Sequential([keras.Input((20, 4)), keras.layers.Conv1D(8, 3, activation="relu"),
                          keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def main():
    tmp = tempfile.mkdtemp(prefix="u74_startup_multimodel_preflight_zoningcodes_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        rng = np.random.default_rng(0)
        manifest = {"devices": devices, "models": {}}
        for name, fn, shape in (("setback", setback_model, (1, 12)),
                                ("landuse", landuse_model, (1, 16, 16, 3)),
                                ("height", height_model, (1, 20, 4))):
            t = time.perf_counter()
            m = fn()
            out = m.predict(rng.normal(size=shape).astype(np.float32), verbose=0)
            manifest["models"][name] = {"params": int(m.count_params()), "out_shape": list(out.shape),
                                        "seconds": round(time.perf_counter() - t, 3)}
        with open(os.path.join(tmp, "preflight.json"), "w") as fh:
            json.dump(manifest, fh)
        print(f"[startup_multimodel_preflight_zoningcodes] devices {devices}, "
              f"{len(manifest['models'])} models ready, wall {time.perf_counter()-WALL0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
