"""Two-tower-style click-through model for a recommender, with gradient logging.

A researcher studying gradient noise keeps every step's gradients (as NumPy
arrays) in a Python list "to analyse after training".  Nothing is ever
dropped, so resident memory grows by the size of the model's gradients on
every step.  Data are in-memory feature vectors fed through a small tf.data
pipeline to a custom @tf.function training step.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_ROWS = 65536
USER_FEAT = 192
ITEM_FEAT = 192
BATCH = 512
STEPS = 500


def make_data(rng):
    u = rng.normal(size=(N_ROWS, USER_FEAT)).astype(np.float32)
    i = rng.normal(size=(N_ROWS, ITEM_FEAT)).astype(np.float32)
    y = ((u[:, :16] * i[:, :16]).sum(1) > 0).astype(np.float32)[:, None]
    return u, i, y


def build_model():
    u_in = keras.Input((USER_FEAT,))
    i_in = keras.Input((ITEM_FEAT,))
    u = keras.layers.Dense(512, activation="relu")(u_in)
    u = keras.layers.Dense(256, activation="relu")(u)
    i = keras.layers.Dense(512, activation="relu")(i_in)
    i = keras.layers.Dense(256, activation="relu")(i)
    x = keras.layers.Concatenate()([u, i, keras.layers.Multiply()([u, i])])
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model([u_in, i_in], out)


def train(ds):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(u, i, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model([u, i], training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    grad_history = []
    stamps = []
    loss = float("nan")
    for u, i, y in ds.take(STEPS):
        loss_t, grads = train_step(u, i, y)
        loss = float(loss_t)
        stamps.append(time.perf_counter())
        grad_history.append([g.numpy() for g in grads])
    mb = sum(a.nbytes for step in grad_history for a in step) / 2 ** 20
    return float(np.mean(np.diff(stamps)[4:])), loss, mb, model.count_params()


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
    data = make_data(np.random.default_rng(0))

    def dataset():
        return (tf.data.Dataset.from_tensor_slices(data).shuffle(N_ROWS, seed=0)
                .repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))

    full, loss, mb, params = train(dataset())
    emit({"steps_per_second": 1.0 / full})
    msg = (f"recsys: {STEPS} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}, "
           f"{params} params, gradient history {mb:.0f} MiB")
    if args.truth:
        batch = next(iter(dataset()))
        compute, _, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
