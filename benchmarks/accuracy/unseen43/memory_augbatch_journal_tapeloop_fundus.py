"""Diabetic-retinopathy grading on retinal fundus crops.

Fundus crops are synthesised in memory; a Python loop builds each augmented
batch (flip, brightness, vignette) and trains a CNN with a @tf.function
GradientTape step. For "reproducibility" every augmented float32 batch is
appended to a journal list that is never trimmed, so RSS grows every step.
"""
import json
import os
import resource
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

SIZE = 96
N_IMG = 512
BATCH = 32
STEPS = 420
N_GRADES = 5


def make_fundus(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE - 0.5
    r = np.sqrt(xx ** 2 + yy ** 2)
    disc = (r < 0.48).astype(np.float32)
    y = rng.integers(0, N_GRADES, N_IMG).astype(np.int32)
    imgs = np.zeros((N_IMG, SIZE, SIZE, 3), np.uint8)
    for i in range(N_IMG):
        base = np.stack([0.75 * disc, 0.35 * disc, 0.15 * disc], -1)
        for _ in range(int(y[i]) * 6):  # lesions
            cx, cy = rng.uniform(-0.35, 0.35, 2)
            base[..., 0] += 0.3 * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 0.0004)[...]
        imgs[i] = np.clip(base * 255 + rng.normal(0, 6, base.shape), 0, 255).astype(np.uint8)
    return imgs, y, r


def build_model():
    keras.utils.set_random_seed(19)
    inp = keras.Input((SIZE, SIZE, 3))
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, layers.Dense(N_GRADES)(x))


def train(batches, journal):
    model = build_model()
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
    loss = 0.0
    for i in range(STEPS):
        x, y = batches(i)
        journal.append((i, x, y))  # kept "to replay any step later"
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_memory_augbatch_journal_tapeloop_fundus_")
    try:
        rng = np.random.default_rng(43)
        imgs, labels, r = make_fundus(rng)
        aug = np.random.default_rng(7)

        def augmented(i):
            idx = aug.integers(0, N_IMG, BATCH)
            x = imgs[idx].astype(np.float32) / 255.0
            flip = aug.random(BATCH) < 0.5
            x[flip] = x[flip, :, ::-1]
            x *= aug.uniform(0.8, 1.2, (BATCH, 1, 1, 1)).astype(np.float32)
            x *= (1 - aug.uniform(0, 0.5, (BATCH, 1, 1, 1)) * r[None, :, :, None] ** 2).astype(np.float32)
            return x, labels[idx]

        journal = []
        full, loss = train(augmented, journal)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = (f"fundus grading: {1.0 / full:.2f} steps/s, loss {loss:.3f}, "
               f"journal {len(journal)} batches, peak RSS {rss:.2f} GiB")
        if truth:
            fixed = augmented(0)
            comp, _ = train(lambda i: fixed, [])
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
