"""Robotic welding cell preflight: no training.

Lists the visible devices, builds and compiles the three models a welding cell loads at
shift start (seam tracker CNN, arc-sound anomaly scorer, wire-feed regressor), runs one
predict on each with a dummy input, and writes a small JSON manifest to a temporary folder.
Nothing is trained and nothing is written to ACCURACY_OUT.
"""
import time
T_START = time.perf_counter()
import json
import os
import shutil
import tempfile
import numpy as np
import tensorflow as tf
import keras

SEED = 61


def seam_tracker():
    inp = keras.Input((64, 128, 1))
    x = keras.layers.Conv2D(16, 3, activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(2)(x), name="seam_tracker")


def arc_sound():
    inp = keras.Input((400, 1))
    x = keras.layers.Conv1D(24, 9, activation="relu")(inp)
    x = keras.layers.Conv1D(32, 9, strides=4, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(1, activation="sigmoid")(x), name="arc_sound")


def wire_feed():
    inp = keras.Input((10,))
    x = keras.layers.Dense(64, activation="relu")(inp)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(1)(x), name="wire_feed")


def main():
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u61_startup_cellpreflight_robotwelding_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        manifest = {"devices": devices, "models": []}
        rng = np.random.default_rng(SEED)
        for build, loss in ((seam_tracker, "mse"), (arc_sound, "binary_crossentropy"), (wire_feed, "mse")):
            m = build()
            m.compile("adam", loss)
            x = rng.normal(0, 1, (1,) + tuple(m.input_shape[1:])).astype(np.float32)
            y = m.predict(x, verbose=0)
            manifest["models"].append({"name": m.name, "params": int(m.count_params()),
                                       "output": np.asarray(y).ravel().round(4).tolist()})
        with open(os.path.join(tmp, "preflight.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        print("robotwelding preflight: %d devices, %d models ok, wall %.1f s" % (
            len(devices), len(manifest["models"]), time.perf_counter() - T_START))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
