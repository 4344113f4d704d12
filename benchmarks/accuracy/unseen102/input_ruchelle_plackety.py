import time; T0 = time.perf_counter()
"""Bodice-fit classifier trained with a model.train_on_batch loop.

Each step the loop's own Python writes up a batch of fitting-room notes:
bust, underbust, back width, armhole depth and dart placements are walked
through the fitting checklist to build the feature rows.
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

SEED = 10206
BATCH = 96
STEPS = 650
N_FEAT = 60
N_FITS = 5           # good, too tight, too loose, gaping armhole, dart misplaced
CHECK_PASSES = 8


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def fitting_note(rnd):
    bust = rnd.gauss(92.0, 8.0)
    underbust = bust - rnd.uniform(8.0, 18.0)
    back = rnd.gauss(36.0, 2.0)
    armhole = rnd.gauss(20.0, 1.5)
    darts = [rnd.uniform(-2.0, 2.0) for _ in range(6)]
    meas = [bust, underbust, back, armhole] + darts
    row = [0.0] * N_FEAT
    for p in range(CHECK_PASSES):
        for j in range(N_FEAT):
            m = meas[j % 10]
            row[j] += math.cos(m * 0.017 * (p + 2) - j) * (1.0 / (1.0 + 0.1 * p)) / CHECK_PASSES
    row[0], row[1], row[2] = (bust - underbust - 13) / 3, (armhole - 20) / 1.5, darts[0] / 2
    if darts[0] > 1.2:
        label = 4
    elif armhole > 21.5:
        label = 3
    elif bust - underbust > 16:
        label = 1
    elif bust - underbust < 10:
        label = 2
    else:
        label = 0
    return row, label


def build_batch(rnd):
    xs, ys = [], []
    for _ in range(BATCH):
        r, l = fitting_note(rnd)
        xs.append(r)
        ys.append(l)
    return np.asarray(xs, dtype=np.float32), np.asarray(ys, dtype=np.int32)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(N_FITS),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(fixed_batch=None):
    model = make_model()
    rnd = random.Random(SEED)
    stamps = []
    t = time.perf_counter()
    for _ in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(rnd)
        else:
            x, y = fixed_batch
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), time.perf_counter() - t, loss


full, loop_wall, loss = train()
emit({"steps_per_second": 1.0 / full})
print(f"input_ruchelle_plackety: {1.0 / full:.1f} steps/s, loop {loop_wall:.1f}s, "
      f"loss {loss:.4f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = build_batch(random.Random(SEED))
    compute, _, _ = train(fixed_batch=batch)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
