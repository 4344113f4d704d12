"""Zoo thermal-camera health screening, compute-bound model.fit (u77).

Domain: a zoo's veterinary team screens animals with a fixed thermal camera
at the night house door; 64x64 radiometric frames are classified as
normal / fever / inflammation hotspot / hypothermic.
Data path: frames generated once into RAM -> tf.data from_tensor_slices ->
shuffle -> batch -> prefetch -> model.fit. No Python work per step.
Deliberate bottleneck: the wide convolutional network itself (compute).
"""
import time

_WALL0 = time.perf_counter()

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


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
SCRIPT = "compute_wideconv_fit_thermalzoo"
BATCH = 16
STEPS = 20
EPOCHS = 2
N = 768


def make_frames(rng):
    x = rng.normal(30.0, 1.0, (N, 64, 64, 1)).astype(np.float32)
    y = rng.integers(0, 4, N).astype(np.int32)
    yy, xx = np.mgrid[0:64, 0:64]
    for i in range(N):
        if y[i] == 1:
            x[i] += 2.0
        elif y[i] == 2:
            cy, cx = rng.integers(10, 54, 2)
            x[i, :, :, 0] += 4.0 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 30.0)
        elif y[i] == 3:
            x[i] -= 2.5
    return (x - 30.0) / 3.0, y


def make_dataset(x, y, seed):
    return (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=seed).repeat()
            .batch(BATCH).prefetch(tf.data.AUTOTUNE))


def build_model():
    inp = keras.Input((64, 64, 1))
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(4)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return _sec_per_step(timer.gaps)


def main():
    args = _args()
    x, y = make_frames(np.random.default_rng(7707))
    full = train(make_dataset(x, y, 1))
    _mark()
    compute = None
    if args.truth:
        batch = next(iter(make_dataset(x, y, 2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    _finish(SCRIPT, full, compute)


if __name__ == "__main__":
    main()
