"""Product-review helpfulness classifier validated on the full hold-out archive.

Bag-of-hashed-words review vectors are in memory.  A custom training loop runs
a short epoch of @tf.function train steps, then evaluates on the whole
hold-out archive (many times larger than one epoch of training: loss,
accuracy and AUC, batch by batch) after every epoch, so most of the wall
time is spent in evaluation.
"""
import time

T_START = time.perf_counter()

import argparse
import json
import os

import numpy as np
import tensorflow as tf
import keras

N_FEAT = 512
N_TRAIN = 8192
N_VAL = 280000
BATCH = 128
VAL_BATCH = 1024
STEPS_PER_EPOCH = 30
EPOCHS = 8


def make_split(rng, n, w):
    x = (rng.random((n, N_FEAT), dtype=np.float32) < 0.03).astype(np.float32)
    y = ((x @ w) > 0).astype(np.float32)[:, None]
    return x, y


def build_model():
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dropout(0.3)(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def train(train_ds, val_ds):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    auc = keras.metrics.AUC(from_logits=True)
    acc = keras.metrics.BinaryAccuracy(threshold=0.0)
    val_loss = keras.metrics.Mean()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def eval_step(x, y):
        logits = model(x, training=False)
        val_loss.update_state(loss_fn(y, logits))
        auc.update_state(y, logits)
        acc.update_state(y, logits)

    it = iter(train_ds)
    step_gaps, eval_s = [], 0.0
    loss = float("nan")
    for epoch in range(EPOCHS):
        stamps = []
        for _ in range(STEPS_PER_EPOCH):
            x, y = next(it)
            loss = float(train_step(x, y))
            stamps.append(time.perf_counter())
        step_gaps.extend(np.diff(stamps).tolist())
        t = time.perf_counter()
        for m in (auc, acc, val_loss):
            m.reset_state()
        for xv, yv in val_ds:
            eval_step(xv, yv)
        val_auc = float(auc.result())
        eval_s += time.perf_counter() - t
    return float(np.mean(step_gaps[5:])), val_auc, eval_s


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    w = rng.normal(size=N_FEAT).astype(np.float32)
    xt, yt = make_split(rng, N_TRAIN, w)
    xv, yv = make_split(rng, N_VAL, w)

    def train_ds():
        return (tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(N_TRAIN, seed=0)
                .repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))

    val_ds = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(VAL_BATCH)
    t = time.perf_counter()
    full, auc, eval_s = train(train_ds(), val_ds)
    loop_s = time.perf_counter() - t
    emit({"steps_per_second": 1.0 / full})
    msg = (f"reviews: {EPOCHS}x{STEPS_PER_EPOCH} steps, {full * 1000:.1f} ms/step, val_auc {auc:.3f}, "
           f"eval {eval_s:.1f}s of loop {loop_s:.1f}s, "
           f"eval share of process wall {100 * eval_s / (time.perf_counter() - T_START):.0f}%")
    if args.truth:
        batch = next(iter(train_ds()))
        t = time.perf_counter()
        compute, _, eval2 = train(tf.data.Dataset.from_tensors(batch).repeat(), val_ds)
        loop2 = time.perf_counter() - t
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += (f", compute-only {compute * 1000:.1f} ms/step (eval {eval2:.1f}s of loop {loop2:.1f}s),"
                f" truth {frac:.3f}")
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
