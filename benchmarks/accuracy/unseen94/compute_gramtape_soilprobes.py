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


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def seconds_per_step(stamps):
    gaps = [b - a for a, b in zip(stamps[:-1], stamps[1:])]
    g = gaps[5:]
    return sum(g) / len(g)


# Soil moisture probes: each vine row has a capacitance probe with 8 depths logged
# hourly for 4 days (96 x 8). A Conv1D encoder followed by second-order (Gram /
# bilinear) pooling predicts irrigation need. All batches are pre-built tf tensors
# and a custom @tf.function GradientTape loop cycles over them: compute-bound.
DEPTHS = 8
HOURS = 96
BATCH = 128
N_BATCHES = 24
STEPS = 300
SEED = 94


def probe_batches():
    rng = np.random.default_rng(SEED)
    out = []
    h = np.arange(HOURS, dtype=np.float32)
    for _ in range(N_BATCHES):
        irrig = rng.uniform(0, 1, (BATCH, 1, 1)).astype(np.float32)
        depth_decay = np.exp(-np.arange(DEPTHS, dtype=np.float32) / 3.0)[None, None, :]
        wave = np.sin(h / 24.0 * 2 * np.pi)[None, :, None]
        x = 0.3 - 0.1 * irrig * depth_decay + 0.02 * wave * depth_decay
        x = x + rng.normal(0, 0.01, (BATCH, HOURS, DEPTHS))
        y = irrig[:, 0, :]
        out.append((tf.constant(x.astype(np.float32)), tf.constant(y.astype(np.float32))))
    return out


class GramPool(keras.layers.Layer):
    def call(self, f):
        g = tf.matmul(f, f, transpose_a=True) / tf.cast(tf.shape(f)[1], f.dtype)
        return tf.reshape(g, (-1, g.shape[1] * g.shape[2]))


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input((HOURS, DEPTHS)),
        keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(96, 5, padding="same", activation="relu"),
        GramPool(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y = get_batch(i)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return seconds_per_step(stamps), loss


batches = probe_batches()
full, last = train(lambda i: batches[i % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print("soil probes gram tape loop: %.2f ms/step, %.1f steps/s, loss %.5f, wall %.1f s"
      % (full * 1e3, 1.0 / full, last, time.perf_counter() - T0))

if TRUTH:
    fixed = batches[0]
    compute, _ = train(lambda i: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
