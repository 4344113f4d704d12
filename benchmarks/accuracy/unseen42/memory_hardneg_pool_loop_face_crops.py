"""Badge-photo identity matching for a building access-control system.

Aligned 96x96 face crops (synthetic, generated in memory as uint8) train an
identity classifier in a custom @tf.function GradientTape loop. For hard-
example replay, the loop copies every above-median-loss crop into a Python
"hard pool" list and mixes a few pool samples into the next batch, but the
pool is never capped, so resident memory climbs step after step.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N = 1500
IDS = 60
SIZE = 96
BATCH = 32
REPLAY = 8
STEPS = 700


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def rss_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def make_faces(rng):
    y = rng.integers(0, IDS, N).astype(np.int32)
    protos = rng.integers(40, 215, (IDS, 12, 12, 3)).astype(np.float32)
    x = np.empty((N, SIZE, SIZE, 3), dtype=np.uint8)
    for i in range(N):
        base = np.kron(protos[y[i]], np.ones((8, 8, 1)))
        x[i] = np.clip(base + rng.normal(0, 25, base.shape), 0, 255).astype(np.uint8)
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    emb = keras.layers.Dense(64, name="embedding")(x)
    out = keras.layers.Dense(IDS)(emb)
    return keras.Model(inp, out)


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            per_example = ce(y, model(x, training=True))
            loss = tf.reduce_mean(per_example)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, per_example

    hard_pool = []  # (crop, label) pairs kept for replay -- never evicted
    pool_rng = np.random.default_rng(SEED + 1)
    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next_batch(step)
        if len(hard_pool) >= REPLAY:
            pick = pool_rng.integers(0, len(hard_pool), REPLAY)
            x = np.concatenate([x[:-REPLAY], np.stack([hard_pool[i][0] for i in pick])])
            y = np.concatenate([y[:-REPLAY], np.asarray([hard_pool[i][1] for i in pick])])
        loss_t, per_example = train_step(x, y)
        loss = float(loss_t)
        stamps.append(time.perf_counter())
        pe = per_example.numpy()
        for i in np.nonzero(pe > np.median(pe))[0]:
            hard_pool.append((x[i].copy(), int(y[i])))
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss, len(hard_pool)


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    faces, labels = make_faces(rng)
    order = rng.permutation(N)

    def sampled(step):
        idx = order[(step * BATCH) % (N - BATCH):][:BATCH]
        return faces[idx].astype(np.float32) / 255.0, labels[idx]

    full, loss, pool = train(sampled)
    emit({"steps_per_second": 1.0 / full})
    msg = "badge-faces: %.1f ms/step loss=%.3f hard_pool=%d rss=%.0fMB" % (
        full * 1e3, loss, pool, rss_mb())
    if truth:
        one = sampled(0)
        compute, _, _ = train(lambda step: one)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
    print(msg)


if __name__ == "__main__":
    main()
