"""Telecom churn model; keeps every step's gradients to study gradient norms after training."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--customers", type=int, default=50000)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--steps", type=int, default=120)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_FEATURES = 180


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


rng = np.random.default_rng(12)
features = rng.normal(size=(args.customers, N_FEATURES)).astype(np.float32)
churned = (features[:, :5].sum(1) + rng.normal(0, 1, args.customers) > 2).astype(np.float32)
train_ds = (
    tf.data.Dataset.from_tensor_slices((features, churned))
    .shuffle(10000)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    return keras.Sequential(
        [
            keras.Input(shape=(N_FEATURES,)),
            keras.layers.Dense(1536, activation="relu"),
            keras.layers.Dense(1536, activation="relu"),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )


def train(dataset):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[:, None], model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    grad_history = []
    loss_history = []
    times = []
    for step, (x, y) in enumerate(dataset):
        if step >= args.steps:
            break
        loss, grads = train_step(x, y)
        loss_history.append(float(loss))
        grad_history.append([g.numpy() for g in grads])
        times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:3d}  bce {loss_history[-1]:.4f}")
    sec = (times[-1] - times[4]) / (len(times) - 5)
    norms = [float(np.sqrt(sum((g**2).sum() for g in gs))) for gs in grad_history[-10:]]
    print("grad norm (last 10 steps):", np.round(norms, 4).tolist())
    return sec, len(grad_history), model.count_params()


sec_full, kept, n_params = train(train_ds)
report("steps_per_second", 1.0 / sec_full)
print(
    f"churn: {args.steps} steps, {sec_full * 1000:.1f} ms/step, kept {kept} gradient snapshots of {n_params / 1e6:.2f}M params"
)

if args.truth:
    batch = next(iter(train_ds))
    sec_cached, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
    )
