"""Fleet-dispatch service preflight: no training.

Lists physical/logical devices, builds and compiles a small bank of fleet
models (ETA regressor, breakdown-risk classifier, fuel-trend Conv1D), runs one predict on each, and writes a small JSON manifest to a
temp dir. Writes nothing to ACCURACY_OUT.
"""
import time
_T0 = time.perf_counter()
import json, os, shutil, tempfile
import numpy as np
import tensorflow as tf
import keras


def bank():
    eta = keras.Sequential([keras.Input((32,)), keras.layers.Dense(128, activation="relu"),
                            keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)], name="eta")
    eta.compile(optimizer="adam", loss="mse")
    risk = keras.Sequential([keras.Input((48,)), keras.layers.Dense(256, activation="relu"),
                             keras.layers.Dropout(0.2), keras.layers.Dense(3, activation="softmax")], name="risk")
    risk.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    fuel = keras.Sequential([keras.Input((256, 6)), keras.layers.Conv1D(32, 5, activation="relu"),
                             keras.layers.MaxPooling1D(4), keras.layers.Conv1D(64, 5, activation="relu"),
                             keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)], name="fuel")
    fuel.compile(optimizer="rmsprop", loss="huber")
    return [eta, risk, fuel]


def main():
    keras.utils.set_random_seed(69)
    tmp = tempfile.mkdtemp(prefix="u69_startup_modelbank_fleetdispatch_")
    try:
        phys = [d.device_type + ":" + d.name for d in tf.config.list_physical_devices()]
        logi = [d.name for d in tf.config.list_logical_devices()]
        rng = np.random.default_rng(69)
        manifest = {"tf": tf.__version__, "keras": keras.__version__, "physical": phys, "logical": logi, "models": {}}
        for m in bank():
            shape = (8,) + tuple(m.input_shape[1:])
            t = time.perf_counter()
            out = m.predict(rng.normal(0, 1, shape).astype(np.float32), verbose=0)
            manifest["models"][m.name] = {"params": int(m.count_params()), "out": list(out.shape),
                                          "predict_s": round(time.perf_counter() - t, 3)}
        with open(os.path.join(tmp, "dispatch_manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        print(f"[startup_modelbank] devices {len(phys)} physical, {len(manifest['models'])} models ready, "
              f"wall {time.perf_counter()-_T0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
