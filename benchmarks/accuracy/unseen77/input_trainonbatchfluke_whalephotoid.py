"""Humpback whale photo-ID from fluke trailing-edge contours (u77).

Domain: a marine-mammal conservation NGO catalogues individual humpbacks by
the trailing edge of the tail fluke; field software exports each sighting as
a JSON record with the traced contour. 24 catalogued individuals.
Data path: JSON strings -> Python batch builder (json.loads, random
rotation/scale/jitter of the contour, pure-Python polyline rasterisation into
a 64x64 mask, distance-to-edge channel) -> model.train_on_batch in a Python
loop; the returned loss is a Python float every step.
Deliberate bottleneck: per-sighting JSON decode + Python rasterisation.
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
SCRIPT = "input_trainonbatchfluke_whalephotoid"
BATCH = 32
STEPS = 60
N_SIGHT = 800
N_ID = 24
PTS = 240
SIDE = 64


def make_sightings(rng):
    protos = rng.normal(0, 1, (N_ID, 8))
    recs, labels = [], []
    xs = np.linspace(-1, 1, PTS)
    for i in range(N_SIGHT):
        w = int(rng.integers(0, N_ID))
        c = protos[w]
        y = 0.3 * np.abs(xs) + sum(0.05 * c[k] * np.sin((k + 1) * np.pi * xs) for k in range(8))
        y += rng.normal(0, 0.01, PTS)
        pts = [[round(float(a), 4), round(float(b), 4)] for a, b in zip(xs, y)]
        recs.append(json.dumps({"sighting": "HW-%05d" % i, "vessel": "RV%d" % (i % 5),
                                "lat": -18.5 + i * 1e-3, "lon": 146.2, "contour": pts}))
        labels.append(w)
    return recs, np.array(labels, np.int32)


def rasterise(rec, rng):
    d = json.loads(rec)
    pts = np.array(d["contour"], np.float64)
    a = rng.normal(0, 0.15)
    s = rng.uniform(0.85, 1.1)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) * s
    pts = pts @ rot.T + rng.normal(0, 0.005, pts.shape)
    px = ((pts[:, 0] + 1.2) / 2.4 * (SIDE - 1)).tolist()
    py = ((pts[:, 1] + 0.6) / 1.6 * (SIDE - 1)).tolist()
    img = [[0.0] * SIDE for _ in range(SIDE)]
    for k in range(len(px) - 1):
        x0, y0, x1, y1 = px[k], py[k], px[k + 1], py[k + 1]
        n = int(max(abs(x1 - x0), abs(y1 - y0)) * 2) + 1
        for j in range(n + 1):
            t = j / n
            xi = int(x0 + (x1 - x0) * t)
            yi = int(y0 + (y1 - y0) * t)
            if 0 <= xi < SIDE and 0 <= yi < SIDE:
                img[yi][xi] = 1.0
    mask = np.array(img, np.float32)
    below = np.cumsum(mask[::-1], 0)[::-1] > 0
    return np.stack([mask, below.astype(np.float32)], -1)


def make_batch(recs, labels, rng):
    picks = rng.integers(0, len(recs), BATCH)
    return np.stack([rasterise(recs[i], rng) for i in picks]), labels[picks]


def build_model():
    m = keras.Sequential([
        keras.Input((SIDE, SIDE, 2)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu", padding="same"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_ID),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(next_batch):
    keras.utils.set_random_seed(77)
    model = build_model()
    gaps, last = [], None
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(np.asarray(model.train_on_batch(x, y)).ravel()[0])
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return _sec_per_step(gaps), loss


def main():
    args = _args()
    recs, labels = make_sightings(np.random.default_rng(7706))
    rng = np.random.default_rng(1)
    full, loss = train(lambda: make_batch(recs, labels, rng))
    _mark()
    compute = None
    if args.truth:
        fixed = make_batch(recs, labels, np.random.default_rng(2))
        compute, _ = train(lambda: fixed)
    _finish(SCRIPT, full, compute, "last loss %.3f" % loss)


if __name__ == "__main__":
    main()
