import time; T0 = time.perf_counter()
"""Trouser-block drafting regressor trained with a custom GradientTape loop.

Each step the loop's own Python drafts a fresh batch of trouser blocks:
it walks waist, seat, rise, inseam and knee measurements through the
block-construction rules, then feeds the arrays to a @tf.function step.
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

SEED = 10205
BATCH = 96
STEPS = 700
N_FEAT = 56
N_OUT = 6            # front/back crotch depth, knee width, hem width, dart intake, fork
BLOCK_PASSES = 8


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def draft_block(rnd):
    waist = rnd.gauss(80.0, 8.0)
    seat = waist * rnd.uniform(1.12, 1.25)
    rise = rnd.gauss(27.0, 1.5)
    inseam = rnd.gauss(78.0, 5.0)
    meas = [waist, seat, rise, inseam, seat / 4.0, waist / 4.0, rise * 0.8, inseam * 0.55]
    row = [0.0] * N_FEAT
    for p in range(BLOCK_PASSES):
        for j in range(N_FEAT):
            m = meas[j % 8]
            row[j] += math.sin(m * 0.021 * (p + 1) + j) * math.exp(-0.01 * p) / BLOCK_PASSES
    row[0], row[1], row[2], row[3] = (waist - 80) / 8, (seat - 95) / 10, (rise - 27) / 1.5, (inseam - 78) / 5
    target = [seat / 16.0 - 5.0, rise / 27.0, inseam / 78.0, waist / 80.0, (seat - waist) / 15.0, seat / 95.0]
    return row, target


def build_batch(rnd):
    xs, ys = [], []
    for _ in range(BATCH):
        r, t = draft_block(rnd)
        xs.append(r)
        ys.append(t)
    return np.asarray(xs, dtype=np.float32), np.asarray(ys, dtype=np.float32)


def make_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(N_OUT),
    ])


def train(fixed_batch=None):
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rnd = random.Random(SEED)
    stamps = []
    t = time.perf_counter()
    for _ in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(rnd)
        else:
            x, y = fixed_batch
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), time.perf_counter() - t, loss


full, loop_wall, loss = train()
emit({"steps_per_second": 1.0 / full})
print(f"input_seamrove_notchery: {1.0 / full:.1f} steps/s, loop {loop_wall:.1f}s, "
      f"loss {loss:.4f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = build_batch(random.Random(SEED))
    compute, _, _ = train(fixed_batch=batch)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
