import time; T0 = time.perf_counter()
import json
import os
import sys
import tempfile
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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


# Harvest crew schedules: each row is one crew-block assignment (crew size, rows,
# row length, start hour, slope, forecast temp/rain, variety, mechanical vs hand,
# days since veraison ...) and the model predicts tonnes picked. After every epoch
# a callback scores the whole season's held-out schedule archive with
# model.evaluate - that evaluation dominates the wall time.
FEATS = 24
N_TRAIN = 6144
N_HELDOUT = 700_000
BATCH = 96
EPOCHS = 5
SEED = 94


def crew_rows(n, rng):
    x = rng.normal(size=(n, FEATS)).astype(np.float32)
    crew = rng.integers(4, 30, n).astype(np.float32)
    rows = rng.integers(2, 40, n).astype(np.float32)
    x[:, 0] = (crew - 16) / 8
    x[:, 1] = (rows - 20) / 10
    y = 0.08 * crew * (1 + 0.3 * x[:, 2]) * np.minimum(rows, crew * 1.5) / 10 - 0.2 * np.maximum(x[:, 3], 0)
    return x, y.astype(np.float32)[:, None]


class HeldoutSweep(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0
        self.scores = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        self.scores.append(self.model.evaluate(self.x, self.y, batch_size=2048, verbose=0))
        self.seconds += time.perf_counter() - t


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(384, activation="relu"),
        keras.layers.Dense(384, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def run(ds, steps, hx, hy):
    model = build_model()
    timer = StepTimer()
    sweep = HeldoutSweep(hx, hy)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer, sweep], verbose=0)
    return timer.seconds_per_step(), sweep


rng = np.random.default_rng(SEED)
tx, ty = crew_rows(N_TRAIN, rng)
hx, hy = crew_rows(N_HELDOUT, rng)
STEPS_PER_EPOCH = N_TRAIN // BATCH
train_ds = tf.data.Dataset.from_tensor_slices((tx, ty)).shuffle(N_TRAIN, seed=SEED).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full, sweep = run(train_ds, STEPS_PER_EPOCH, hx, hy)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print("harvest crews: %.2f ms/step, %.1f steps/s, held-out eval %.1f s of wall %.1f s = %.1f%%, last mae %.3f"
      % (full * 1e3, 1.0 / full, sweep.seconds, wall, 100 * sweep.seconds / wall, sweep.scores[-1][1]))

if TRUTH:
    one = next(iter(train_ds))
    compute, sweep2 = run(tf.data.Dataset.from_tensors(one).repeat(), STEPS_PER_EPOCH, hx, hy)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print("truth: compute %.2f ms/step, input fraction %.3f; eval %.1f s of total wall %.1f s = %.1f%%"
          % (compute * 1e3, frac, sweep.seconds + sweep2.seconds, wall, 100 * (sweep.seconds + sweep2.seconds) / wall))
