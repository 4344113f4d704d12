import time; T0 = time.perf_counter()
"""Juggling pattern difficulty model trained from siteswap notation.

Each step the loop writes a fresh batch of vanilla siteswap strings (the way
the troupe's pattern book records them), parses and validates them in Python,
simulates the ball landing schedule over a 96-beat run, and turns the result
into a feature vector; the label is the pattern's difficulty band.  A custom
training loop with a @tf.function GradientTape step learns the band.
"""
import os
import sys
import json
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 800
BEATS = 1920
N_FEATURES = 128
N_BANDS = 6
THROW_CHARS = "0123456789abc"


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def random_siteswap(rng):
    """Draw period-n throws until a valid vanilla siteswap appears."""
    while True:
        n = rng.randint(3, 7)
        throws = [rng.randint(0, 12) for _ in range(n)]
        if len({(i + t) % n for i, t in enumerate(throws)}) == n:
            return "".join(THROW_CHARS[t] for t in throws)


def pattern_features(pattern):
    throws = [THROW_CHARS.index(c) for c in pattern]
    n = len(throws)
    balls = sum(throws) // n
    landing = [0] * (BEATS + 16)
    hands = [0.0, 0.0]
    collisions = 0
    for beat in range(BEATS):
        t = throws[beat % n]
        if t:
            land = beat + t
            if landing[land]:
                collisions += 1
            landing[land] += 1
            hands[beat % 2] += t * t
    feats = [0.0] * N_FEATURES
    for i, t in enumerate(throws):
        feats[i * 13 + t] = 1.0
    feats[91] = balls / 7.0
    feats[92] = n / 7.0
    feats[93] = max(throws) / 12.0
    feats[94] = collisions / BEATS
    feats[95] = (hands[0] - hands[1]) / 2000.0
    for b in range(32):
        feats[96 + b] = landing[b * 60] / 2.0
    band = min(N_BANDS - 1, (balls + max(throws) // 3 + (n > 4)) // 2)
    return feats, band


def build_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        f, b = pattern_features(random_siteswap(rng))
        xs.append(f)
        ys.append(b)
    return np.asarray(xs, np.float32), np.asarray(ys, np.int32)


def build_model():
    return keras.Sequential([
        keras.Input(shape=(N_FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_BANDS),
    ])


def run(fixed_batch=None):
    keras.utils.set_random_seed(8)
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

    rng = random.Random(8)
    gaps = []
    last = None
    for step in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(rng)
        else:
            x, y = fixed_batch
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


def main():
    full, loss = run()
    emit({"steps_per_second": 1.0 / full})
    print(f"[jugglion] siteswap loop: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, "
          f"loss {loss:.3f}, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        fixed = build_batch(random.Random(1234))
        compute, _ = run(fixed)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[jugglion] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
