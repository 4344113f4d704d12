"""Fatigue-life regressor for alloy coupons, with MC-dropout uncertainty evaluated by a callback.

Training data (composition, heat treatment, stress amplitude, R-ratio -> log10 cycles to
failure) sit in memory. After every epoch a callback runs 24 stochastic (dropout-on)
forward passes over a large held-out coupon set and reports coverage of the 90% band.
That end-of-epoch evaluation dominates the wall time by design.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 64
N_TRAIN = 6400
N_HOLD = 60000
EPOCHS = 3
STEPS = N_TRAIN // BATCH
PASSES = 24
FEATS = 12


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class MCDropoutEval(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t0 = time.perf_counter()
        fwd = tf.function(lambda b: self.model(b, training=True))
        draws = []
        for p in range(PASSES):
            outs = [fwd(self.x[s:s + 4096]).numpy() for s in range(0, len(self.x), 4096)]
            draws.append(np.concatenate(outs)[:, 0])
        draws = np.stack(draws)
        lo, hi = np.percentile(draws, [5, 95], axis=0)
        cover = float(np.mean((self.y >= lo) & (self.y <= hi)))
        self.seconds += time.perf_counter() - t0
        print("  epoch %d MC-dropout coverage %.3f (%.1f s)" % (epoch, cover, time.perf_counter() - t0))


def make_coupons(rng, n):
    x = rng.normal(0, 1, (n, FEATS)).astype(np.float32)
    stress = x[:, 0]
    y = 6.0 - 1.2 * stress + 0.3 * x[:, 1] * x[:, 2] - 0.2 * np.abs(x[:, 3]) + rng.normal(0, 0.15, n)
    return x, y.astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((FEATS,)),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dropout(0.2),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dropout(0.2),
                          keras.layers.Dense(1)])
    m.compile("adam", "mse")
    return m


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    x, y = make_coupons(rng, N_TRAIN)
    hx, hy = make_coupons(rng, N_HOLD)
    model = build_model()
    timer, ev = StepTimer(), MCDropoutEval(hx, hy)
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, ev], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    eval_s = ev.seconds
    msg = "alloyfatigue MC-dropout eval: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
    if args.truth:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        model2 = build_model()
        timer2, ev2 = StepTimer(), MCDropoutEval(hx, hy)
        model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2, ev2], verbose=0)
        comp = timer2.seconds_per_step()
        eval_s += ev2.seconds
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    wall = time.perf_counter() - T_START
    print(msg + ", eval %.1f s = %.0f%% of wall %.1f s" % (eval_s, 100 * eval_s / wall, wall))


if __name__ == "__main__":
    main()
