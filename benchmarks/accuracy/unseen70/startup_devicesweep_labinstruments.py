import time
T0 = time.perf_counter()
import os, sys, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

# ---- startup_devicesweep_labinstruments: a lab-instrument service preflight. It lists
# devices, builds and compiles three small models (spectrometer, rheometer,
# colorimeter heads), runs one predict on each and writes a small manifest. It
# trains nothing and writes nothing to ACCURACY_OUT.


def spectrometer():
    inp = keras.Input((1024, 1))
    x = keras.layers.Conv1D(32, 9, activation="relu")(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(8)(x), name="spectrometer")


def rheometer():
    inp = keras.Input((200, 4))
    x = keras.layers.Conv1D(16, 5, activation="relu")(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(3)(x), name="rheometer")


def colorimeter():
    inp = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(16, 3, activation="relu")(inp)
    x = keras.layers.GlobalMaxPooling2D()(x)
    return keras.Model(inp, keras.layers.Dense(3)(x), name="colorimeter")


def main():
    out = tempfile.mkdtemp(prefix="u70_startup_devicesweep_labinstruments_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        logical = [d.name for d in tf.config.list_logical_devices()]
        rng = np.random.default_rng(70)
        manifest = {"physical": devices, "logical": logical, "tf": tf.__version__, "models": {}}
        for build in (spectrometer, rheometer, colorimeter):
            m = build()
            m.compile(optimizer="adam", loss="mse")
            x = rng.normal(size=(4,) + tuple(m.input_shape[1:])).astype(np.float32)
            y = m.predict(x, verbose=0)
            manifest["models"][m.name] = {"params": int(m.count_params()), "out": list(y.shape)}
        with open(os.path.join(out, "manifest.json"), "w") as fh:
            json.dump(manifest, fh)
        print(f"[startup_devicesweep_labinstruments] devices {devices}, models {list(manifest['models'])}, wall {time.perf_counter()-T0:.1f}s")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
