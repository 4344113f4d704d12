import time; T0 = time.perf_counter()
import json
import os
import sys

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


def seconds_per_step(stamps):
    gaps = [b - a for a, b in zip(stamps[:-1], stamps[1:])]
    g = gaps[5:]
    return sum(g) / len(g)


# Barrel cellar humidity: each training example is one barrel rack's 12-hour window
# of 5-minute hygrometer readings (temperature, RH). Batches are assembled in a plain Python
# loop: per reading we compute dew point (Magnus formula), vapour-pressure deficit
# and an evaporation ("angel's share") index in pure Python, then feed a custom
# @tf.function GradientTape step that predicts weekly topping-up volume.
import math
import random

WINDOW = 144
FEATS = 5
BATCH = 64
STEPS = 600
SEED = 94


def rack_window(rng):
    base_t = rng.uniform(11.0, 16.0)
    base_rh = rng.uniform(60.0, 88.0)
    rows = []
    loss = 0.0
    for i in range(WINDOW):
        t = base_t + 0.8 * math.sin(i / WINDOW * 2 * math.pi) + rng.gauss(0, 0.1)
        rh = min(99.0, max(30.0, base_rh - 2.0 * math.sin(i / WINDOW * 2 * math.pi) + rng.gauss(0, 0.6)))
        a, b = 17.62, 243.12
        gamma = math.log(rh / 100.0) + a * t / (b + t)
        dew = b * gamma / (a - gamma)
        es = 0.6108 * math.exp(17.27 * t / (t + 237.3))
        vpd = es * (1.0 - rh / 100.0)
        evap = vpd * (1.0 + 0.02 * (t - 12.0))
        loss += evap
        rows.append(((t - 13.0) / 3.0, (rh - 75.0) / 15.0, dew / 15.0, vpd, evap))
    return rows, loss / WINDOW


def next_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        rows, y = rack_window(rng)
        xs.append(rows)
        ys.append(y)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input((WINDOW, FEATS)),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = batch_source()
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return seconds_per_step(stamps), loss


rng = random.Random(SEED)
full, last = train(lambda: next_batch(rng))
emit({"steps_per_second": 1.0 / full})
print("barrel cellar tape loop: %.2f ms/step, %.1f steps/s, loss %.4f, wall %.1f s"
      % (full * 1e3, 1.0 / full, last, time.perf_counter() - T0))

if TRUTH:
    fixed = next_batch(random.Random(SEED + 1))
    compute, _ = train(lambda: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
