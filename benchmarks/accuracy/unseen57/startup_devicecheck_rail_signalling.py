"""Rail: pre-flight check for a signalling-fault model stack (no training).

Before a nightly training job for interlocking/track-circuit fault models, this script
lists devices, builds and compiles the three models of the stack (track-circuit current
classifier, point-machine motor-current autoencoder, signal-lamp failure scorer), runs one
predict on a dummy batch through each, and writes a small JSON manifest to a temp folder.
It trains nothing and writes nothing to ACCURACY_OUT: nearly all of its wall time is
TensorFlow import, graph building and first-call tracing.
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


def track_circuit():
    m = keras.Sequential([keras.Input((64, 4)), keras.layers.Conv1D(16, 5, activation="relu"),
                          keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(6)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              run_eagerly=True)
    return m, np.zeros((8, 64, 4), np.float32)


def point_machine():
    m = keras.Sequential([keras.Input((128,)), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(8), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(128)])
    m.compile(optimizer="adam", loss="mse", run_eagerly=True)
    return m, np.zeros((8, 128), np.float32)


def lamp_scorer():
    m = keras.Sequential([keras.Input((24,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy", run_eagerly=True)
    return m, np.zeros((8, 24), np.float32)


keras.utils.set_random_seed(57)
out_dir = tempfile.mkdtemp(prefix="u57_startup_devicecheck_rail_signalling_")
try:
    manifest = {"tensorflow": tf.__version__, "keras": keras.__version__,
                "devices": [d.name for d in tf.config.list_physical_devices()], "models": {}}
    for name, fn in (("track_circuit", track_circuit), ("point_machine", point_machine),
                     ("lamp_scorer", lamp_scorer)):
        model, dummy = fn()
        pred = model.predict(dummy, verbose=0)
        manifest["models"][name] = {"params": int(model.count_params()), "out_shape": list(pred.shape)}
    with open(os.path.join(out_dir, "preflight.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"startup_devicecheck_rail_signalling: {len(manifest['devices'])} devices, "
          f"{len(manifest['models'])} models checked, wall {time.perf_counter()-_T0:.1f} s")
finally:
    shutil.rmtree(out_dir, ignore_errors=True)
