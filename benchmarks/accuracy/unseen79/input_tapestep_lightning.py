"""Lightning location network -> 30-minute convective rain-rate nowcast on a 16x16 grid tile.

For every batch, a Python loop takes the raw stroke reports (time, lat, lon, peak current,
cloud-to-ground flag) of each tile window and bins them into flash-density, mean-current and
CG-ratio grids, then a custom @tf.function GradientTape step trains a small CNN.
"""
import time; T0 = time.perf_counter()
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_WINDOWS = 2500
GRID = 16
STROKES = 500
BATCH = 32
STEPS = 1100


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


rng = np.random.default_rng(7904)
# each window: STROKES reports with columns t_min, lat, lon, kA, is_cg
centre = rng.uniform(0.2, 0.8, (N_WINDOWS, 1, 2))
spread = rng.uniform(0.05, 0.3, (N_WINDOWS, 1, 1))
pos = np.clip(centre + rng.normal(0, 1, (N_WINDOWS, STROKES, 2)) * spread, 0, 0.999)
t_min = rng.uniform(0, 30, (N_WINDOWS, STROKES, 1))
ka = rng.lognormal(2.8, 0.6, (N_WINDOWS, STROKES, 1)) * rng.choice([-1, 1], (N_WINDOWS, STROKES, 1), p=[0.85, 0.15])
is_cg = (rng.random((N_WINDOWS, STROKES, 1)) < 0.25).astype(np.float64)
strokes = np.concatenate([t_min, pos, ka, is_cg], axis=-1)
active = rng.integers(20, STROKES, N_WINDOWS)
rain_mmh = (active / STROKES * 40 + rng.normal(0, 2, N_WINDOWS)).astype(np.float32)


def bin_window(k):
    dens = [[0.0] * GRID for _ in range(GRID)]
    cur = [[0.0] * GRID for _ in range(GRID)]
    cg = [[0.0] * GRID for _ in range(GRID)]
    rows = strokes[k, :active[k]].tolist()
    for t, la, lo, amp, c in rows:
        i = int(la * GRID)
        j = int(lo * GRID)
        w = math.exp(-(30.0 - t) / 15.0)          # recent strokes weigh more
        dens[i][j] += w
        cur[i][j] += abs(amp) * w
        cg[i][j] += c * w
    out = np.zeros((GRID, GRID, 3), dtype=np.float32)
    for i in range(GRID):
        for j in range(GRID):
            d = dens[i][j]
            if d > 0:
                out[i, j, 0] = math.log1p(d)
                out[i, j, 1] = cur[i][j] / d / 50.0
                out[i, j, 2] = cg[i][j] / d
    return out


def make_batch(step):
    ids = [(step * BATCH + b) * 7919 % N_WINDOWS for b in range(BATCH)]
    x = np.stack([bin_window(k) for k in ids])
    y = rain_mmh[ids].reshape(-1, 1)
    return x, y


def make_model():
    inp = keras.Input(shape=(GRID, GRID, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(1)(x), name="flash_nowcast")


def train(batch_source):
    keras.utils.set_random_seed(79)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss


full, loss = train(make_batch)
emit({"steps_per_second": 1.0 / full})
print(f"lightning tapestep: {STEPS} steps, {full*1000:.1f} ms/step, loss {loss:.3f}, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = make_batch(0)
    compute, _ = train(lambda step: fixed)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
