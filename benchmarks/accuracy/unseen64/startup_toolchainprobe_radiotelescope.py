import os, sys, time, json, tempfile, shutil
WALL0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

# Radio-telescope pipeline preflight: before a (separate) RFI-flagging training job is
# launched, this probe lists devices, builds and compiles three candidate models
# (visibility-spectrum CNN, dynamic-spectrum 2D CNN, baseline MLP), runs one predict
# each on a dummy batch, and writes a small JSON manifest. It trains nothing; its cost
# is pure startup (TF import, device discovery, graph building). It writes nothing to
# ACCURACY_OUT.

t_import = time.perf_counter() - WALL0
devices = [d.name for d in tf.config.list_physical_devices()]
logical = [d.name for d in tf.config.list_logical_devices()]
keras.utils.set_random_seed(64)


def spectrum_cnn():
    m = keras.Sequential([keras.Input((1024, 2)), keras.layers.Conv1D(32, 7, activation="relu"),
                          keras.layers.Conv1D(32, 5, activation="relu"), keras.layers.GlobalMaxPooling1D(),
                          keras.layers.Dense(1, activation="sigmoid")], name="spectrum_cnn")
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m, np.zeros((8, 1024, 2), np.float32)


def dynspec_cnn():
    m = keras.Sequential([keras.Input((64, 256, 1)), keras.layers.Conv2D(16, 3, activation="relu"),
                          keras.layers.MaxPooling2D(), keras.layers.Conv2D(32, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(2)], name="dynspec_cnn")
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m, np.zeros((8, 64, 256, 1), np.float32)


def baseline_mlp():
    m = keras.Sequential([keras.Input((351,)), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)], name="baseline_mlp")
    m.compile(optimizer="sgd", loss="mse")
    return m, np.zeros((8, 351), np.float32)


report = {"tf": tf.__version__, "keras": keras.__version__, "physical": devices, "logical": logical,
          "import_s": round(t_import, 3), "models": {}}
for builder in (spectrum_cnn, dynspec_cnn, baseline_mlp):
    t = time.perf_counter()
    model, dummy = builder()
    out = model.predict(dummy, verbose=0)
    report["models"][model.name] = {"params": int(model.count_params()), "out_shape": list(out.shape),
                                    "build_predict_s": round(time.perf_counter() - t, 3)}
tmp = tempfile.mkdtemp(prefix="u64_startup_toolchainprobe_radiotelescope_")
try:
    with open(os.path.join(tmp, "preflight.json"), "w") as f:
        json.dump(report, f, indent=1)
    size = os.path.getsize(os.path.join(tmp, "preflight.json"))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("radiotelescope preflight: %d devices, %d models, manifest %d bytes, import %.1f s, wall %.1f s"
      % (len(devices), len(report["models"]), size, t_import, time.perf_counter() - WALL0))
