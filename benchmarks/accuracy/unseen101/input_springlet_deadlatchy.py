import time; T0 = time.perf_counter()
"""Deadlatch failure predictor trained with a custom GradientTape loop.

Each step the loop itself builds a batch in Python: it simulates a latch bolt
being thrown against a strike (spring force, bevel friction, door gap) over a
short time series, then hands the numpy arrays to a @tf.function train step.
"""
import os, sys, json, math, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1015
BATCH = 128
STEPS = 1000
TICKS = 40
FEATS = TICKS + 4
N_CLASSES = 3


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def throw_latch(rng):
    spring = rng.uniform(2.0, 6.0)
    bevel = rng.uniform(0.1, 0.6)
    gap = rng.uniform(1.0, 6.0)
    mass = rng.uniform(0.02, 0.08)
    x, v = 0.0, 0.0
    trace = []
    for t in range(TICKS):
        f = spring * (10.0 - x) * 0.1 - bevel * v - (3.0 if x > gap else 0.0)
        for _ in range(18):
            v += f / mass * 0.00003
            x += v * 0.0002
        trace.append(x / 10.0)
    engaged = x > gap
    label = int(engaged) + int(bevel < 0.3 and spring > 4.0)
    return trace + [spring / 6, bevel, gap / 6, mass * 10], label


def build_batch(rng):
    rows, labels = [], []
    for _ in range(BATCH):
        r, l = throw_latch(rng)
        rows.append(r)
        labels.append(l)
    return np.asarray(rows, np.float32), np.asarray(labels, np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_CLASSES),
    ])


def run(fixed_batch=None):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    rng = random.Random(SEED)
    stamps = []
    for step in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(rng)
        else:
            x, y = fixed_batch
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


full, loss = run()
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"input_springlet_deadlatchy: {1.0/full:.2f} steps/s, loss {loss:.3f}, wall {wall:.1f}s"

if TRUTH:
    batch = build_batch(random.Random(SEED + 1))
    compute, _ = run(fixed_batch=batch)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
