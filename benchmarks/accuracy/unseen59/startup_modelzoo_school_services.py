"""Public services / education: pre-flight check of a district's model zoo.

Trains nothing. Lists devices, builds and compiles three small models used
by a school-district service (enrolment forecast MLP, bus-route delay temporal conv net,
attendance image CNN), runs one predict on each with a dummy batch, and
writes a small JSON manifest to a temporary directory. Writes nothing to
ACCURACY_OUT. Bottleneck: startup (TF import, graph building, first-call
tracing).
"""
import time
WALL0 = time.perf_counter()
import json, os, shutil, tempfile
import numpy as np
import tensorflow as tf
import keras


def models():
    L = keras.layers
    enrol = keras.Sequential([keras.Input((24,)), L.Dense(64, activation="relu"), L.Dense(1)], name="enrolment_mlp")
    bus = keras.Sequential([keras.Input((30, 6)), L.Conv1D(32, 3, activation="relu"), L.GlobalAveragePooling1D(), L.Dense(1)], name="bus_delay_tcn")
    att = keras.Sequential([keras.Input((48, 48, 1)), L.Conv2D(16, 3, activation="relu"), L.GlobalAveragePooling2D(), L.Dense(3)], name="attendance_cnn")
    return [(enrol, (24,)), (bus, (30, 6)), (att, (48, 48, 1))]


def main():
    out = tempfile.mkdtemp(prefix="u59_startup_modelzoo_school_services_")
    try:
        devices = [d.device_type + ":" + d.name for d in tf.config.list_physical_devices()]
        keras.utils.set_random_seed(59)
        manifest = {"tf": tf.__version__, "keras": keras.__version__, "devices": devices, "models": []}
        for m, shape in models():
            m.compile(optimizer="adam", loss="mse")
            p = m.predict(np.zeros((4,) + shape, np.float32), verbose=0)
            manifest["models"].append({"name": m.name, "params": int(m.count_params()), "out_shape": list(p.shape)})
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        print("startup_modelzoo_school_services: %d devices, %d models checked, wall %.1f s"
              % (len(devices), len(manifest["models"]), time.perf_counter() - WALL0))
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
