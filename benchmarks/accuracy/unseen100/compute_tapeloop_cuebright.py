import time; T0 = time.perf_counter()
"""Lighting cue sheet timing model with a custom loop over pre-built tensors.

The lighting desk exports every cue of every show as a sequence of fixture
intensity frames.  All cue sequences are converted to tensors once, before
training; the custom @tf.function GradientTape loop then cycles over those
pre-built batches and a 1-D convolutional network learns how many frames of
fade each cue really needs.  Nothing is built in Python during training.
"""
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 300
N_BATCHES = 24
FRAMES = 128
FIXTURES = 32


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def make_cue_batches(seed):
    rng = np.random.default_rng(seed)
    batches = []
    t = np.linspace(0, 1, FRAMES, dtype=np.float32)[None, :, None]
    for _ in range(N_BATCHES):
        fade = rng.uniform(0.05, 0.9, (BATCH, 1, 1)).astype(np.float32)
        target = rng.uniform(0, 1, (BATCH, 1, FIXTURES)).astype(np.float32)
        frames = np.clip(t / fade, 0, 1) * target + rng.normal(0, 0.03, (BATCH, FRAMES, FIXTURES))
        batches.append((tf.constant(frames.astype(np.float32)),
                        tf.constant(fade.reshape(BATCH, 1))))
    return batches


def build_model():
    return keras.Sequential([
        keras.Input(shape=(FRAMES, FIXTURES)),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def run(batches):
    keras.utils.set_random_seed(6)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    mse = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    last = None
    for step in range(STEPS):
        x, y = batches[step % len(batches)]
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


def main():
    batches = make_cue_batches(6)
    full, loss = run(batches)
    emit({"steps_per_second": 1.0 / full})
    print(f"[cuebright] pre-built tensors: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, "
          f"loss {loss:.4f}, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        compute, _ = run([batches[0]])
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[cuebright] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
