"""Crackle-glaze photos -> craze-density classifier (custom GradientTape loop).

Photos of raku / celadon test tiles are rendered on the fly in NumPy: a glaze
base tone, a Voronoi-like craze network drawn segment by segment, ink
rubbed into the cracks, then random crop / flip / brightness jitter.  A plain
Python loop builds each batch and calls a @tf.function GradientTape step.
"""
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

IMG = 64
RAW = 80
BATCH = 32
STEPS = 240
CLASSES = 4            # fine craze, medium, coarse, none


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def render_tile(r):
    label = int(r.integers(0, CLASSES))
    base = r.uniform(0.55, 0.9)
    img = np.full((RAW, RAW), base, np.float32) + r.normal(0, 0.02, (RAW, RAW)).astype(np.float32)
    n_seeds = [40, 18, 7, 0][label]
    seeds = r.uniform(0, RAW, (n_seeds, 2))
    for i in range(n_seeds):
        d = np.linalg.norm(seeds - seeds[i], axis=1)
        for j in np.argsort(d)[1:4]:
            p0, p1 = seeds[i], seeds[j]
            n = int(max(abs(p1 - p0)) + 1)
            xs = np.clip(np.linspace(p0[0], p1[0], n).astype(int), 0, RAW - 1)
            ys = np.clip(np.linspace(p0[1], p1[1], n).astype(int), 0, RAW - 1)
            img[ys, xs] *= 0.35                                    # ink in the craze line
    ox, oy = r.integers(0, RAW - IMG, 2)
    img = img[oy:oy + IMG, ox:ox + IMG]
    if r.random() < 0.5:
        img = img[:, ::-1]
    img = img * r.uniform(0.85, 1.15)
    return img[..., None], label


def make_batch(r):
    xs, ys = zip(*(render_tile(r) for _ in range(BATCH)))
    return np.stack(xs).astype(np.float32), np.array(ys, np.int32)


def make_model():
    return keras.Sequential([
        keras.Input((IMG, IMG, 1)),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(CLASSES),
    ])


def train(batches):
    """batches: callable step -> (x, y). Returns seconds per step."""
    keras.utils.set_random_seed(91)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


rng = np.random.default_rng(91)
full, last_loss = train(lambda step: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"crackleglaze: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, loss {last_loss:.3f}, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fx, fy = make_batch(np.random.default_rng(5))
    compute, _ = train(lambda step: (fx, fy))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"crackleglaze: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
