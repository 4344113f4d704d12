"""Rhino-poaching risk map, evaluation-bound training (u77).

Domain: ranger patrol planning in a rhino sanctuary; each 1 km grid cell-day
has 64 covariates (patrol effort, distance to fence/roads/water, moon
illumination, past incursions...) and a label "poaching sign found".
Data path: in-memory arrays -> tf.data -> model.fit (cheap steps). A
RiskMapEvaluation callback, at every epoch end, runs model.predict over the
whole sanctuary hold-out grid (several hundred thousand cell-days) and
computes ROC-AUC, top-decile capture and Brier score in numpy.
Deliberate bottleneck: the per-epoch full-grid predict + metrics (eval).
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
SCRIPT = "eval_predictcallback_rhinopatrol"
BATCH = 256
STEPS = 15
EPOCHS = 6
N_TRAIN = 20000
N_GRID = 300000
F = 64


def make_data(rng, n, w):
    x = rng.normal(0, 1, (n, F)).astype(np.float32)
    logit = x @ w - 2.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def auc(y, p):
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y > 0.5
    npos, nneg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - npos * (npos + 1) / 2) / max(npos * nneg, 1)


class RiskMapEvaluation(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        t0 = time.perf_counter()
        p = self.model.predict(self.x, batch_size=1024, verbose=0).ravel()
        p = 1 / (1 + np.exp(-p))
        top = np.argsort(-p)[: len(p) // 10]
        self.history.append({"auc": float(auc(self.y, p)),
                             "top_decile_capture": float(self.y[top].sum() / max(self.y.sum(), 1)),
                             "brier": float(np.mean((p - self.y) ** 2))})
        self.seconds += time.perf_counter() - t0


def build_model():
    m = keras.Sequential([
        keras.Input((F,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def train(ds, evaluator):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, evaluator], verbose=0)
    return _sec_per_step(timer.gaps)


def main():
    args = _args()
    rng = np.random.default_rng(7710)
    w = rng.normal(0, 0.4, F).astype(np.float32)
    xt, yt = make_data(rng, N_TRAIN, w)
    xg, yg = make_data(rng, N_GRID, w)

    def ds(seed):
        return tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(N_TRAIN, seed=seed).repeat().batch(BATCH)

    ev = RiskMapEvaluation(xg, yg)
    full = train(ds(1), ev)
    _mark()
    compute = None
    if args.truth:
        batch = next(iter(ds(2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat(), RiskMapEvaluation(xg, yg))
    wall = time.perf_counter() - _WALL0
    _finish(SCRIPT, full, compute, "first-run eval %.1f s = %.0f%% of wall so far (auc %.3f)" % (
        ev.seconds, 100 * ev.seconds / wall, ev.history[-1]["auc"]))


if __name__ == "__main__":
    main()
