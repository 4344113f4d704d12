"""Payroll fraud (ghost employees, duplicate payouts) anomaly classifier.

Eval-bound: a callback scores a large in-memory holdout of payroll records
with model.predict at every epoch end and sweeps 200 alert thresholds
(precision/recall). Training itself is short. Feeds model.fit.
"""
import time
WALL0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import keras

PARSER = argparse.ArgumentParser()
PARSER.add_argument("--truth", action="store_true",
                    help="also train on one cached batch and report the input fraction")
ARGS = PARSER.parse_args()
keras.utils.set_random_seed(68)


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


def finish(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    msg = f"[{name}] sec/step={full:.4f} steps/s={1.0 / full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute_sec/step={compute:.4f} truth_input_fraction={frac:.3f}"
    msg += extra + f" wall={time.perf_counter() - WALL0:.1f}s"
    print(msg, flush=True)
NAME = "eval_holdoutpredict_callback_payrollfraud"
BATCH = 256
STEPS = 20
EPOCHS = 3
NFEAT = 48
NTRAIN = 20000
NHOLD = 160000
PRED_BATCH = 2048


def make_records(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, NFEAT)).astype(np.float32)
    logit = 2.0 * x[:, 0] - 1.5 * x[:, 3] + x[:, 7] * x[:, 11] - 3.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y.reshape(-1, 1)


class HoldoutSweep(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y.ravel()
        self.seconds = 0.0
        self.best = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        p = self.model.predict(self.x, batch_size=PRED_BATCH, verbose=0).ravel()
        order = np.argsort(-p)
        ys = self.y[order]
        tp = np.cumsum(ys)
        best_f1 = 0.0
        for thr in np.linspace(0.01, 0.99, 200):
            k = int(np.searchsorted(-p[order], -thr))
            if k == 0:
                continue
            prec = tp[k - 1] / k
            rec = tp[k - 1] / max(1.0, ys.sum())
            if prec + rec > 0:
                best_f1 = max(best_f1, 2 * prec * rec / (prec + rec))
        self.best.append(best_f1)
        self.seconds += time.perf_counter() - t


def build_model():
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="adam", loss="binary_crossentropy", jit_compile=False)
    return m


def train(ds, hold):
    model = build_model()
    timer = StepTimer()
    sweep = HoldoutSweep(*hold)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, sweep], verbose=0)
    return sec_per_step(timer.gaps), sweep


def main():
    x, y = make_records(NTRAIN, 1)
    hold = make_records(NHOLD, 2)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(NTRAIN, seed=68).repeat().batch(BATCH).prefetch(2)
    full, sweep = train(ds, hold)
    eval_s = sweep.seconds
    compute = None
    if ARGS.truth:
        compute, sweep2 = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), hold)
        eval_s += sweep2.seconds
    wall = time.perf_counter() - WALL0
    finish(NAME, full, compute,
           extra=f" eval_seconds={eval_s:.1f} eval_share_of_wall={eval_s / wall:.2f} best_f1={sweep.best[-1]:.3f}")


if __name__ == "__main__":
    main()
