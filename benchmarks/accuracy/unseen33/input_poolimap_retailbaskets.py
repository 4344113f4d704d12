"""Next-basket spend tier for a grocery chain.

Each batch of customer feature vectors is assembled in a multiprocessing pool
(imap_unordered) from simulated raw transaction logs and fed to model.fit
through a Python generator.
"""
import argparse
import json
import multiprocessing as mp
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_ITEMS = 256
BATCH = 128
STEPS = 300
EPOCHS = 2
EVENTS_PER_CUSTOMER = 420


class StepClock(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def build_batch(seed):
    """Turn simulated raw basket logs into a feature matrix (pure Python)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((BATCH, N_ITEMS * 2), dtype=np.float32)
    y = np.zeros((BATCH,), dtype=np.int32)
    for row in range(BATCH):
        items = rng.integers(0, N_ITEMS, EVENTS_PER_CUSTOMER).tolist()
        prices = rng.gamma(2.0, 3.0, EVENTS_PER_CUSTOMER).tolist()
        days = sorted(rng.integers(0, 365, EVENTS_PER_CUSTOMER).tolist())
        counts = [0.0] * N_ITEMS
        recency = [0.0] * N_ITEMS
        spend = 0.0
        for item, price, day in zip(items, prices, days):
            counts[item] += 1.0
            w = 0.5 ** ((364 - day) / 30.0)
            recency[item] += w * price
            spend += price * w
        total = sum(counts)
        x[row, :N_ITEMS] = [c / total for c in counts]
        x[row, N_ITEMS:] = [r / (spend + 1e-6) for r in recency]
        dept = [sum(recency[d::5]) for d in range(5)]
        y[row] = dept.index(max(dept))
    return x, y


def make_model():
    inputs = keras.Input((N_ITEMS * 2,))
    h = keras.layers.Dense(512, activation="relu")(inputs)
    h = keras.layers.Dropout(0.1)(h)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    outputs = keras.layers.Dense(5)(h)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def pool_batches(pool, n, offset):
    for xb, yb in pool.imap_unordered(build_batch, range(offset, offset + n), chunksize=1):
        yield xb, yb


def train(data, clock):
    keras.utils.set_random_seed(7)
    model = make_model()
    t0 = time.perf_counter()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return model, hist, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    ctx = mp.get_context("fork")
    pool = ctx.Pool(processes=2)
    try:
        clock = StepClock()
        _, hist, wall = train(pool_batches(pool, STEPS * EPOCHS, 1000), clock)
        full = clock.seconds_per_step()
        report(steps_per_second=1.0 / full)
        msg = f"retailbaskets: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {hist.history['loss'][-1]:.3f}"
        if args.truth:
            batch = build_batch(999)
            fixed = tf.data.Dataset.from_tensors(batch).repeat()
            clock2 = StepClock()
            train(fixed, clock2)
            compute = clock2.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report(truth_input_fraction=frac)
            msg += f", truth_input_fraction {frac:.3f}"
        print(msg)
    finally:
        pool.terminate()
        pool.join()


if __name__ == "__main__":
    main()
