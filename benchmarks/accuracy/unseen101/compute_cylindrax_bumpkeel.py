import time; T0 = time.perf_counter()
"""Keyway-profile recogniser: conv net trained by a @tf.function GradientTape loop.

Synthetic 48x48 keyway cross-section images (warded grooves, paracentric
wiggles) are rendered once into a small list of tensors before training; the
loop cycles through them, so each step is pure convolution compute.
"""
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1018
BATCH = 32
SIZE = 48
STEPS = 260
N_BATCHES = 12
N_CLASSES = 8


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def render_keyways():
    rs = np.random.RandomState(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    batches = []
    for _ in range(N_BATCHES):
        labels = rs.randint(0, N_CLASSES, BATCH)
        imgs = np.zeros((BATCH, SIZE, SIZE, 1), np.float32)
        for i, lab in enumerate(labels):
            wiggle = 0.15 * np.sin(yy * (3 + lab) * np.pi + rs.uniform(0, 6))
            imgs[i, ..., 0] = (np.abs(xx - 0.5 - wiggle) < 0.12).astype(np.float32)
            imgs[i, ..., 0] += 0.1 * rs.normal(0, 1, (SIZE, SIZE))
        batches.append((tf.constant(imgs), tf.constant(labels.astype(np.int32))))
    return batches


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input((SIZE, SIZE, 1)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_CLASSES),
    ])


def run(batches):
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

    stamps = []
    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


batches = render_keyways()
full, loss = run(batches)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"compute_cylindrax_bumpkeel: {1.0/full:.2f} steps/s, loss {loss:.3f}, wall {wall:.1f}s"

if TRUTH:
    compute, _ = run([batches[0]])
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
