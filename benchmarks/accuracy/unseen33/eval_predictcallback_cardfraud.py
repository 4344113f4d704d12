"""Card-transaction fraud scoring with a live hold-out monitor.

Training is cheap (an MLP on in-memory features), but a callback scores a
large hold-out set with model.predict every few training batches and
computes a precision-at-k alert metric, so most wall time is evaluation.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 64
N_TRAIN = 60000
N_HOLDOUT = 250000
BATCH = 256
STEPS = 100
EPOCHS = 2
SCORE_EVERY = 10


class HoldoutMonitor(keras.callbacks.Callback):
    """Scores the hold-out set every SCORE_EVERY batches (precision at top 1%)."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.spent = 0.0
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SCORE_EVERY:
            return
        t0 = time.perf_counter()
        scores = self.model.predict(self.x, batch_size=4096, verbose=0).ravel()
        top = np.argpartition(-scores, len(scores) // 100)[: len(scores) // 100]
        self.history.append(float(self.y[top].mean()))
        self.spent += time.perf_counter() - t0


class StepClock(keras.callbacks.Callback):
    """Seconds per training step; time spent inside the monitor is taken out."""

    def __init__(self, monitor):
        super().__init__()
        self.monitor = monitor
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        spent = self.monitor.spent
        if self._last is not None:
            self.gaps.append(now - self._last[0] - (spent - self._last[1]))
        self._last = (now, spent)

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def synth(rng, n, w):
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    logit = x @ w - 4.0 + 0.5 * x[:, 0] * x[:, 1]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return x, y


def make_model():
    inputs = keras.Input((N_FEATURES,))
    h = keras.layers.Dense(256, activation="relu")(inputs)
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(h))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(ds, holdout, clock_holder):
    keras.utils.set_random_seed(1)
    model = make_model()
    monitor = HoldoutMonitor(*holdout)
    clock = StepClock(monitor)
    clock_holder.append(clock)
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[monitor, clock], verbose=0)
    wall = time.perf_counter() - t0
    return hist, monitor, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    w = rng.normal(scale=0.4, size=N_FEATURES)
    x, y = synth(rng, N_TRAIN, w)
    holdout = synth(rng, N_HOLDOUT, w)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(8192, seed=0).batch(BATCH).repeat().prefetch(2)
    clocks = []
    hist, monitor, wall = train(ds, holdout, clocks)
    full = clocks[0].seconds_per_step()
    report(steps_per_second=1.0 / full)
    msg = (f"cardfraud: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, eval share {monitor.spent / wall:.2f}, "
           f"p@1% {monitor.history[-1]:.3f}")
    if args.truth:
        batch = (x[:BATCH], y[:BATCH])
        train(tf.data.Dataset.from_tensors(batch).repeat(), holdout, clocks)
        compute = clocks[1].seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
