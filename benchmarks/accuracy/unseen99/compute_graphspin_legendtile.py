import time; T0 = time.perf_counter()
"""Scanned map-legend tile classifier: custom @tf.function loop on tensors.

Synthetic 48x48 RGB legend swatches (hatching, stipple, solid fills, line
symbols) are rendered with numpy once, cut into batch tensors before training,
and a small convolutional network is trained with a GradientTape step that
cycles over those pre-built tensors.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SIZE = 48
BATCH = 64
N_BATCHES = 24
STEPS = 150
CLASSES = 6


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def legend_tiles(n, rs):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    labels = rs.randint(0, CLASSES, n)
    tiles = np.empty((n, SIZE, SIZE, 3), np.float32)
    for i, c in enumerate(labels):
        colour = rs.uniform(0.2, 1.0, 3).astype(np.float32)
        period = rs.uniform(4, 10)
        if c == 0:
            mask = np.ones_like(xx)
        elif c == 1:
            mask = ((xx + yy) % period < period / 2).astype(np.float32)
        elif c == 2:
            mask = ((xx - yy) % period < period / 3).astype(np.float32)
        elif c == 3:
            mask = (rs.rand(SIZE, SIZE) < 0.15).astype(np.float32)
        elif c == 4:
            mask = (np.abs(yy - SIZE / 2) < 2).astype(np.float32)
        else:
            mask = (((xx % period) < 1.5) | ((yy % period) < 1.5)).astype(np.float32)
        tiles[i] = mask[..., None] * colour + rs.normal(0, 0.05, (SIZE, SIZE, 3))
    return tiles, labels.astype(np.int32)


rs = np.random.RandomState(4)
tiles, labels = legend_tiles(BATCH * N_BATCHES, rs)
BATCHES = [(tf.constant(tiles[i * BATCH:(i + 1) * BATCH]),
            tf.constant(labels[i * BATCH:(i + 1) * BATCH])) for i in range(N_BATCHES)]


def build_model():
    keras.utils.set_random_seed(8)
    return keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(CLASSES),
    ])


def train(next_batch):
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

    gaps, last = [], None
    for step in range(STEPS):
        x, y = next_batch(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    gaps = gaps[5:] or gaps
    return sum(gaps) / len(gaps), loss


full, loss = train(lambda s: BATCHES[s % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print(f"legendtile: tensor loop {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    bx, by = BATCHES[0]
    compute, _ = train(lambda s: (bx, by))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"legendtile: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
