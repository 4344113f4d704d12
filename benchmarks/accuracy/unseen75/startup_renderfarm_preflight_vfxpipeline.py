"""VFX pipeline pre-flight check run on each render-farm node before a job is
dispatched: list the visible devices, build and compile the three production
models (shot classifier, matte-edge refiner, colour-transform regressor), run one
predict on each with a dummy plate, and write a small JSON node report to a temp
dir. It trains nothing, so only process start-up (TF import, graph building)
matters. Intended bottleneck: STARTUP. Writes nothing to ACCURACY_OUT."""
import time
T0 = time.perf_counter()
import os, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

L = keras.layers


def shot_classifier():
    inp = keras.Input((96, 96, 3))
    h = L.Conv2D(16, 3, strides=2, activation="relu")(inp)
    h = L.Conv2D(32, 3, strides=2, activation="relu")(h)
    h = L.GlobalAveragePooling2D()(h)
    return keras.Model(inp, L.Dense(8)(h), name="shot_classifier")


def matte_refiner():
    inp = keras.Input((64, 64, 4))
    h = L.Conv2D(16, 3, padding="same", activation="relu")(inp)
    h = L.Conv2D(16, 3, padding="same", activation="relu")(h)
    return keras.Model(inp, L.Conv2D(1, 1, activation="sigmoid")(h), name="matte_refiner")


def colour_transform():
    inp = keras.Input((27,))
    h = L.Dense(64, activation="relu")(inp)
    return keras.Model(inp, L.Dense(9)(h), name="colour_transform")


def main():
    tmp = tempfile.mkdtemp(prefix="u75_startup_renderfarm_preflight_vfxpipeline_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        report = {"tf": tf.__version__, "keras": keras.__version__, "devices": devices, "models": {}}
        for build, shape in ((shot_classifier, (1, 96, 96, 3)), (matte_refiner, (1, 64, 64, 4)),
                             (colour_transform, (1, 27))):
            m = build()
            m.compile(optimizer="adam", loss="mse")
            out = m.predict(np.zeros(shape, np.float32), verbose=0)
            report["models"][m.name] = {"params": int(m.count_params()), "out": list(out.shape)}
        path = os.path.join(tmp, "node_report.json")
        with open(path, "w") as fh:
            json.dump(report, fh)
        print(f"[startup_renderfarm_preflight_vfxpipeline] devices={len(devices)} models=3 "
              f"report={os.path.getsize(path)}B wall={time.perf_counter()-T0:.1f}s", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
