import time; T0 = time.perf_counter()
"""Contour-raster classifier fed by a Python generator.

Each example is a small elevation raster synthesised hill by hill in plain
Python, then cut into contour bands (50 m interval) and summarised by how many
contour lines cross each row.  The generator feeds tf.data.Dataset.from_generator
and the terrain class (lowland / rolling / upland / mountain) is learnt by a
small dense network.
"""
import json
import math
import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

GRID = 22            # raster cells per side
HILLS = 5            # gaussian hills per raster
INTERVAL = 50.0      # contour interval in metres
BATCH = 32
STEPS = 130
EPOCHS = 3


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


def contour_raster(rng):
    relief = rng.choice([120.0, 300.0, 600.0, 1100.0])
    hills = [(rng.uniform(0, GRID), rng.uniform(0, GRID),
              rng.uniform(0.3, 1.0) * relief, rng.uniform(2.0, 6.0))
             for _ in range(HILLS)]
    heights = []
    for i in range(GRID):
        row = []
        for j in range(GRID):
            h = 0.0
            for cx, cy, amp, sig in hills:
                d2 = (i - cx) ** 2 + (j - cy) ** 2
                h += amp * math.exp(-d2 / (2.0 * sig * sig))
            row.append(h)
        heights.append(row)
    feats = []
    for row in heights:
        bands = [int(h // INTERVAL) for h in row]
        crossings = sum(abs(b - a) for a, b in zip(bands, bands[1:]))
        feats.append(crossings / 10.0)
        feats.append(max(row) / 1000.0)
    for j in range(GRID):
        col = [heights[i][j] for i in range(GRID)]
        bands = [int(h // INTERVAL) for h in col]
        feats.append(sum(abs(b - a) for a, b in zip(bands, bands[1:])) / 10.0)
    label = [120.0, 300.0, 600.0, 1100.0].index(relief)
    return np.asarray(feats, np.float32), np.int32(label)


def raster_stream(seed):
    rng = random.Random(seed)
    while True:
        yield contour_raster(rng)


NFEAT = GRID * 3


def make_dataset(seed=11):
    ds = tf.data.Dataset.from_generator(
        lambda: raster_stream(seed),
        output_signature=(tf.TensorSpec((NFEAT,), tf.float32),
                          tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(5)
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(4),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"contourfell: generator run {full * 1000:.1f} ms/step, "
      f"{1.0 / full:.1f} steps/s, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    one = next(iter(make_dataset(seed=99)))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"contourfell: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
