"""Berth-occupancy (hours alongside) regression from vessel-call sequences (port logistics).

Data path: call-history sequences synthesised once and converted to tensors;
a custom tf.GradientTape loop slices batches from those tensors on the fly.
Model: two stacked GRU layers + dense head (the compute-heavy part).
Known bottleneck: compute (batches are tensor slices of in-memory data).
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 120
SEQ = 32
NFEAT = 16


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_data(seed=4, n=4096):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, SEQ, NFEAT)).astype(np.float32)
    teu = np.abs(x[:, :, 0]).mean(axis=1)
    cranes = 2 + (x[:, -1, 1] > 0)
    y = (teu * 30 / cranes + 0.2 * x[:, :, 2].sum(axis=1)).astype(np.float32)[:, None]
    return tf.constant(x), tf.constant(y)


def build_model():
    inp = keras.Input((SEQ, NFEAT))
    h = keras.layers.GRU(64, return_sequences=True)(inp)
    h = keras.layers.GRU(64)(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(1)(h))


def run(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last, loss = [], None, None
    for step in range(STEPS):
        x, y = next_batch(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = make_data()
    n = int(x.shape[0]) // BATCH

    def sliced(step):
        i = (step % n) * BATCH
        return x[i:i + BATCH], y[i:i + BATCH]

    t = time.perf_counter()
    full, loss = run(sliced)
    print("[gruencoder] steps/s=%.2f sec/step=%.4f loss=%.3f train_s=%.1f" % (1 / full, full, loss, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        fixed = sliced(0)
        comp, _ = run(lambda step: fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[gruencoder] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[gruencoder] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
