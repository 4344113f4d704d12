"""Telecom churn model monitored on several held-out splits after every epoch.

Training is a short fit over an in-memory table.  A callback evaluates the
model at every epoch end on four held-out splits (by region and by
contract type, as the retention team asks) with model.evaluate and also
scores the full customer base with model.predict for drift checks, so the
wall time is dominated by evaluation/prediction, not by training.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

FEATURES = 40
BATCH = 128
STEPS_PER_EPOCH = 60
EPOCHS = 5
N_TRAIN = BATCH * STEPS_PER_EPOCH
N_SPLIT = 80_000
N_BASE = 150_000
HIDDEN = 256


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self):
        gaps = [g for ts in self.epochs for g in np.diff(ts)]
        return float(np.mean(gaps[4:]))  # steps 5 onward


class HeldOutMonitor(keras.callbacks.Callback):
    def __init__(self, splits, base):
        super().__init__()
        self.splits, self.base = splits, base
        self.seconds = 0.0
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        row = {}
        for name, (x, y) in self.splits.items():
            row[name] = self.model.evaluate(x, y, batch_size=256, verbose=0, return_dict=True)["auc"]
        scores = self.model.predict(self.base, batch_size=512, verbose=0)
        row["base_churn_rate"] = float((scores > 0.5).mean())
        self.history.append(row)
        self.seconds += time.perf_counter() - t


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_customers(n, rng, shift=0.0):
    x = rng.normal(shift, 1.0, (n, FEATURES)).astype("float32")
    logit = x[:, 0] * 1.2 - x[:, 1] + 0.5 * x[:, 2] * x[:, 3] - 0.8
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype("float32")
    return x, y


def build_model():
    keras.utils.set_random_seed(23)
    model = keras.Sequential([
        keras.Input((FEATURES,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(name="auc")])
    return model


def train(ds, splits, base):
    model = build_model()
    clock, monitor = StepClock(), HeldOutMonitor(splits, base)
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock, monitor], verbose=0)
    return clock.seconds_per_step(), monitor.seconds, time.perf_counter() - t, monitor.history[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x, y = make_customers(N_TRAIN, rng)
    splits = {name: make_customers(N_SPLIT, rng, shift) for name, shift in
              [("north", 0.0), ("south", 0.1), ("prepaid", -0.1), ("contract", 0.2)]}
    base = make_customers(N_BASE, rng)[0]
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=0).repeat().batch(BATCH).prefetch(2)
    t0 = time.perf_counter()
    full, eval_s, fit_s, last = train(ds, splits, base)
    report(steps_per_second=1.0 / full)
    msg = (f"telecom churn: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s, "
           f"evaluation {eval_s:.1f}s of fit {fit_s:.1f}s ({eval_s / fit_s:.0%}), last AUCs "
           + ", ".join(f"{k}={v:.3f}" for k, v in last.items()))
    if args.truth:
        batch = next(iter(ds))
        compute, _, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), splits, base)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
