"""Bakery production line: start-up probe of the vision/forecast services.
Trains nothing: lists devices, builds and compiles three small models (proof
camera CNN, oven-temperature Conv1D, demand MLP), runs one predict each and writes
a small JSON manifest.  Nothing is written to ACCURACY_OUT."""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


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


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()


def models():
    cam = keras.Sequential([keras.Input((64, 64, 3)), keras.layers.Conv2D(16, 3, activation="relu"),
                            keras.layers.MaxPooling2D(), keras.layers.Conv2D(32, 3, activation="relu"),
                            keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3, activation="softmax")])
    oven = keras.Sequential([keras.Input((48, 4)), keras.layers.Conv1D(16, 5, activation="relu"), keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    demand = keras.Sequential([keras.Input((20,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(7)])
    return {"proof_camera": (cam, (2, 64, 64, 3)), "oven_profile": (oven, (2, 48, 4)), "daily_demand": (demand, (2, 20))}


def main():
    parse_args()
    root = tempfile.mkdtemp(prefix="u73_startup_modelprobe_devices_bakeryline_")
    try:
        devices = [d.name for d in tf.config.list_physical_devices()]
        rng = np.random.default_rng(0)
        manifest = {"devices": devices, "models": {}}
        for name, (m, shape) in models().items():
            m.compile(optimizer="adam", loss="mse")
            pred = m.predict(rng.normal(size=shape).astype(np.float32), verbose=0)
            manifest["models"][name] = {"params": int(m.count_params()), "out": list(pred.shape)}
        with open(os.path.join(root, "probe_manifest.json"), "w") as fh:
            json.dump(manifest, fh)
        print(f"[bakeryline] startup probe: {len(devices)} devices, {len(manifest['models'])} models, wall {time.perf_counter() - _T0:.1f}s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
