"""Seismic first-break picking classifier; custom loop under tf.distribute.MirroredStrategy."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--global-batch", type=int, default=64)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

TRACE = 512
CHANNELS = 3
N_TRACES = 4096
NUM_CLASSES = 4


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


strategy = tf.distribute.MirroredStrategy()
print("replicas:", strategy.num_replicas_in_sync)

rng = np.random.default_rng(9)
labels = rng.integers(0, NUM_CLASSES, N_TRACES).astype(np.int32)
t = np.arange(TRACE)[None, :]
onset = 100 + 80 * labels[:, None]
traces = rng.normal(0, 0.2, (N_TRACES, TRACE, CHANNELS)).astype(np.float32)
traces[..., 0] += (np.sin(0.3 * t) * (t > onset)).astype(np.float32)

train_ds = (
    tf.data.Dataset.from_tensor_slices((traces, labels))
    .cache()
    .shuffle(N_TRACES)
    .batch(args.global_batch, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)
steps_per_epoch = N_TRACES // args.global_batch


def build_model():
    inputs = keras.Input((TRACE, CHANNELS))
    x = layers.Conv1D(32, 9, strides=2, padding="same", activation="relu")(inputs)
    x = layers.Conv1D(64, 7, padding="same", activation="relu")(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(64, 7, padding="same", activation="relu")(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = layers.GlobalMaxPooling1D()(x)
    outputs = layers.Dense(NUM_CLASSES)(x)
    return keras.Model(inputs, outputs)


def train(dataset):
    with strategy.scope():
        model = build_model()
        optimizer = keras.optimizers.Adam(1e-3)
    loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step_fn(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            per_example = loss_obj(y, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=args.global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(x, y):
        per_replica = strategy.run(step_fn, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    dist_ds = strategy.experimental_distribute_dataset(dataset)
    durations = []
    for epoch in range(args.epochs):
        last = time.perf_counter()
        losses = []
        for step, (x, y) in enumerate(dist_ds):
            if step >= steps_per_epoch:
                break
            losses.append(float(distributed_step(x, y)))
            now = time.perf_counter()
            durations.append(now - last)
            last = now
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f}")
    return float(np.mean(durations[5:]))


full = train(train_ds)
print(f"cached dataset: {full * 1000:.1f} ms/step")
report("steps_per_second", 1.0 / full)

if args.truth:
    fixed_batch = next(iter(train_ds))
    compute = train(tf.data.Dataset.from_tensors(fixed_batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    report("truth_input_fraction", frac)
    print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")

print(f"done: {args.epochs} epochs x {steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
