import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Botanic-garden app start-up check: before any training the service lists
# devices, builds and compiles three small models (plant-ID CNN, visitor-count
# GRU, collection-record MLP), runs one predict on each and writes a small
# manifest. It trains nothing and writes nothing to ACCURACY_OUT.
workdir = tempfile.mkdtemp(prefix="u78_startup_devicezoo_botanicgarden_")
try:
    devices = [d.name for d in tf.config.list_physical_devices()]
    logical = [d.name for d in tf.config.list_logical_devices()]
    rng = np.random.default_rng(78)
    keras.utils.set_random_seed(78)
    cnn = keras.Sequential([keras.Input((96, 96, 3)),
                            keras.layers.Conv2D(32, 3, activation="relu"),
                            keras.layers.MaxPooling2D(),
                            keras.layers.Conv2D(64, 3, activation="relu"),
                            keras.layers.GlobalAveragePooling2D(),
                            keras.layers.Dense(120)])
    gru = keras.Sequential([keras.Input((48, 6)), keras.layers.GRU(64), keras.layers.Dense(1)])
    mlp = keras.Sequential([keras.Input((40,)), keras.layers.Dense(256, activation="relu"),
                            keras.layers.Dense(256, activation="relu"), keras.layers.Dense(12)])
    manifest = {"devices": devices, "logical": logical, "models": {}}
    for name, model, shape in [("plant_id_cnn", cnn, (8, 96, 96, 3)),
                               ("visitor_gru", gru, (8, 48, 6)),
                               ("record_mlp", mlp, (8, 40))]:
        model.compile(optimizer="adam", loss="mse")
        t = time.perf_counter()
        out = model.predict(rng.normal(size=shape).astype(np.float32), verbose=0)
        manifest["models"][name] = {"params": int(model.count_params()),
                                    "out_shape": list(out.shape),
                                    "first_predict_s": round(time.perf_counter() - t, 3)}
    with open(os.path.join(workdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"[startup_devicezoo_botanicgarden] {len(devices)} devices, 3 models ready, "
          f"wall {time.perf_counter()-T0:.1f}s")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
