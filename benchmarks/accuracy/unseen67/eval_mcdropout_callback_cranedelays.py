"""Quay-crane delay-minutes regression with Monte-Carlo-dropout evaluation (container terminal).

Data path: in-memory numpy features -> tf.data batch/repeat -> model.fit.
Evaluation: a callback runs, at every epoch end, MC-dropout uncertainty
estimation (many stochastic forward passes over a large validation set) and
computes calibration coverage.
Known bottleneck: evaluation (the epoch-end MC-dropout callback).
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os

import numpy as np
import tensorflow as tf
import keras

BATCH = 128
STEPS = 40
EPOCHS = 2
NFEAT = 48
NVAL = 30000
MC_PASSES = 16


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


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


class MCDropoutEval(keras.callbacks.Callback):
    def __init__(self, xv, yv):
        super().__init__()
        self.xv, self.yv, self.seconds = xv, yv, 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        fwd = tf.function(lambda x: self.model(x, training=True))
        draws = []
        for _ in range(MC_PASSES):
            outs = [fwd(self.xv[i:i + 2048]).numpy() for i in range(0, len(self.xv), 2048)]
            draws.append(np.concatenate(outs)[:, 0])
        draws = np.stack(draws)
        mu, sd = draws.mean(0), draws.std(0) + 1e-6
        cover = float(np.mean(np.abs(self.yv - mu) < 1.96 * sd))
        mae = float(np.mean(np.abs(self.yv - mu)))
        self.seconds += time.perf_counter() - t
        print("[mcdropout] epoch %d val_mae=%.3f coverage95=%.3f eval_s=%.1f" % (
            epoch, mae, cover, time.perf_counter() - t))


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_data(seed=8, n=8000):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(NFEAT) / np.sqrt(NFEAT)

    def gen(m):
        x = rng.standard_normal((m, NFEAT)).astype(np.float32)  # wind, moves/h, twin-lifts, hatch covers...
        y = (np.maximum(0, x @ w * 8 + 5) + rng.gamma(2.0, 1.0, m)).astype(np.float32)
        return x, y
    return gen(n), gen(NVAL)


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(384, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    x = keras.layers.Dropout(0.2)(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds, xv, yv):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer, ev = StepTimer(), MCDropoutEval(xv, yv)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, ev], verbose=0)
    return sec_per_step(timer.gaps), ev.seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    (x, y), (xv, yv) = make_data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=0).repeat().batch(BATCH)
    t = time.perf_counter()
    full, eval_s = run(ds, xv, yv)
    wall = time.perf_counter() - _T0
    print("[mcdropout] steps/s=%.2f sec/step=%.4f fit_s=%.1f eval_s=%.1f eval_share_of_wall=%.2f wall_s=%.1f" % (
        1 / full, full, time.perf_counter() - t, eval_s, eval_s / wall, wall))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = next(iter(ds))
        comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat(), xv, yv)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[mcdropout] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[mcdropout] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
