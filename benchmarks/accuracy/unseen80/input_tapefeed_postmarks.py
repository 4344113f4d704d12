"""Postmark dating: rendered circular date stamps -> decade of use.

A plain Python loop draws each batch of postmark crops (double ring, town
name arc, date numerals, duplex killer bars, ink density and smudging) and
feeds a custom @tf.function GradientTape train step.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import math
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 32
STEPS = 440
SIDE = 48
DECADES = list(range(1850, 1960, 10))  # 11 classes


def draw_postmark(rng, decade_idx):
    img = np.zeros((SIDE, SIDE), np.float32)
    cx = SIDE / 2 + rng.gauss(0, 2)
    cy = SIDE / 2 + rng.gauss(0, 2)
    # ring radii and style drift by era
    r_out = 19 - 0.3 * decade_idx + rng.gauss(0, 0.5)
    r_in = r_out - (6 if decade_idx < 5 else 4)
    ink = rng.uniform(0.5, 1.0)
    for ring_r in (r_out, r_in) if decade_idx > 2 else (r_out,):
        for t in range(360):
            a = 2 * math.pi * t / 360
            x = int(cx + ring_r * math.cos(a))
            y = int(cy + ring_r * math.sin(a))
            if 0 <= x < SIDE and 0 <= y < SIDE and rng.random() < ink + 0.2:
                img[y, x] += ink
    # town name letters along the upper arc
    n_letters = rng.randint(5, 10)
    for k in range(n_letters):
        a = math.pi * (1.15 + 0.7 * k / max(n_letters - 1, 1))
        lr = (r_out + r_in) / 2
        lx, ly = cx + lr * math.cos(a), cy + lr * math.sin(a)
        for _ in range(24):
            x = int(lx + rng.gauss(0, 0.8))
            y = int(ly + rng.gauss(0, 0.8))
            if 0 <= x < SIDE and 0 <= y < SIDE:
                img[y, x] += 0.6 * ink
    # date line: digits as small dot clusters, count depends on format era
    digits = 6 if decade_idx < 6 else 8
    for d in range(digits):
        dx = cx - digits + 2 * d
        for _ in range(16):
            x = int(dx + rng.gauss(0, 0.5))
            y = int(cy + rng.gauss(0, 1.2))
            if 0 <= x < SIDE and 0 <= y < SIDE:
                img[y, x] += 0.7 * ink
    # duplex killer bars for early decades, wavy lines for machine cancels
    if decade_idx < 4:
        for b in range(5):
            y = int(cy - 8 + 4 * b)
            for x in range(int(cx + r_out + 1), SIDE):
                if 0 <= y < SIDE:
                    img[y, x] += 0.8 * ink
    elif decade_idx > 6:
        for w in range(4):
            for x in range(SIDE):
                y = int(cy - 9 + 6 * w + 2 * math.sin(x * 0.4))
                if 0 <= y < SIDE and x > cx + r_out - 2:
                    img[y, x] += 0.7 * ink
    smudge = (img + np.roll(img, 1, 0) + np.roll(img, 1, 1)) / 3.0
    paper = 0.1 + 0.04 * np.asarray([rng.random() for _ in range(SIDE * SIDE)],
                                    np.float32).reshape(SIDE, SIDE)
    return np.clip(smudge + paper, 0.0, 1.5)


def make_batch(rng):
    xs = np.empty((BATCH, SIDE, SIDE, 1), np.float32)
    ys = np.empty((BATCH,), np.int32)
    for i in range(BATCH):
        d = rng.randrange(len(DECADES))
        xs[i, :, :, 0] = draw_postmark(rng, d)
        ys[i] = d
    return xs, ys


def build_model():
    inp = keras.Input((SIDE, SIDE, 1))
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(len(DECADES))(x)
    return keras.Model(inp, out)


def train(batch_source):
    keras.utils.set_random_seed(19)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss_value = float("nan")
    for step in range(STEPS):
        xb, yb = batch_source()
        loss_value = float(train_step(xb, yb))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss_value


def main():
    rng = random.Random(1840)
    full, loss = train(lambda: make_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    print(f"[postmarks] normal run: {full * 1000:.1f} ms/step, final loss {loss:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        fixed = make_batch(random.Random(99))
        compute, _ = train(lambda: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[postmarks] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
