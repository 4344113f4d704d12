import time; T0 = time.perf_counter()
"""Costume inventory wear predictor, trained on an in-memory table.

The wardrobe department keeps an inventory of every costume: fabric, sequin
count, wash cycles, number of quick changes per show, repairs logged and so
on.  The whole table is already a NumPy array in memory, so model.fit slices
batches straight from it; a wide, deep MLP predicts how many shows each
costume lasts before its next repair.  The time goes into the model itself.
"""
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 256
EPOCHS = 3
N_ROWS = 256 * 100
N_FEATURES = 48


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def make_inventory(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (N_ROWS, N_FEATURES)).astype(np.float32)
    x[:, 0] = rng.integers(0, 4000, N_ROWS) / 4000.0      # sequins
    x[:, 1] = rng.integers(0, 300, N_ROWS) / 300.0        # wash cycles
    x[:, 2] = rng.integers(0, 12, N_ROWS) / 12.0          # quick changes per show
    w = rng.normal(0, 1, (N_FEATURES, 1)).astype(np.float32)
    y = np.maximum(0.0, 40 + 10 * (x @ w) - 30 * x[:, 1:2] - 15 * x[:, 2:3]).astype(np.float32)
    return x, y / 40.0


def build_model():
    model = keras.Sequential([keras.Input(shape=(N_FEATURES,))] +
                             [keras.layers.Dense(1280, activation="gelu") for _ in range(4)] +
                             [keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(fit_kwargs):
    timer = StepTimer()
    model = build_model()
    model.fit(epochs=EPOCHS, callbacks=[timer], verbose=0, **fit_kwargs)
    return timer.seconds_per_step()


def main():
    x, y = make_inventory(2)
    steps = N_ROWS // BATCH
    keras.utils.set_random_seed(2)
    full = train(dict(x=x, y=y, batch_size=BATCH, shuffle=True))
    emit({"steps_per_second": 1.0 / full})
    print(f"[spanglet] in-memory fit: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, "
          f"wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        keras.utils.set_random_seed(2)
        compute = train(dict(x=tf.data.Dataset.from_tensors(batch).repeat(),
                             steps_per_epoch=steps))
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[spanglet] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
