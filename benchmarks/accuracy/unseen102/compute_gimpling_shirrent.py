import time; T0 = time.perf_counter()
"""Weave-type classifier for fabric swatch photos (twill, satin, plain, herringbone...).

Synthetic 48x48 swatch textures are rendered once into tensors up front; a
@tf.function GradientTape loop trains a small conv net over them.
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

SEED = 10208
BATCH = 32
N_BATCHES = 24
STEPS = 250
SIZE = 48
N_WEAVES = 6


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def render_swatches(rng, n):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    labels = rng.integers(0, N_WEAVES, size=n)
    imgs = np.empty((n, SIZE, SIZE, 3), dtype=np.float32)
    for i, w in enumerate(labels):
        angle = 0.3 * w + rng.normal(0, 0.05)
        freq = 0.4 + 0.1 * w
        tex = np.sin(freq * (xx * np.cos(angle) + yy * np.sin(angle)))
        tex += 0.3 * rng.normal(size=tex.shape)
        imgs[i] = tex[..., None] * rng.uniform(0.5, 1.0, size=3)
    return imgs, labels.astype(np.int32)


rng = np.random.default_rng(SEED)
batches = []
for _ in range(N_BATCHES):
    x, y = render_swatches(rng, BATCH)
    batches.append((tf.constant(x), tf.constant(y)))


def make_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input(shape=(SIZE, SIZE, 3)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_WEAVES),
    ])


def train(fixed=None):
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    t = time.perf_counter()
    for i in range(STEPS):
        x, y = fixed if fixed is not None else batches[i % N_BATCHES]
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), time.perf_counter() - t, loss


full, loop_wall, loss = train()
emit({"steps_per_second": 1.0 / full})
print(f"compute_gimpling_shirrent: {1.0 / full:.2f} steps/s, loop {loop_wall:.1f}s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    compute, _, _ = train(fixed=batches[0])
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
