"""Store-level demand forecasting: several optimizer steps per tf.function call."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--calls", type=int, default=50)
parser.add_argument("--steps-per-call", type=int, default=8)
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

LOOKBACK = 56
N_STORES = 4096
N_COVARIATES = 6

# ---------------------------------------------------------------- data (in memory)
rng = np.random.default_rng(8)
days = np.arange(LOOKBACK + 1)
level = rng.gamma(3.0, 20.0, size=(N_STORES, 1))
weekly = 1 + 0.3 * np.sin(2 * np.pi * days / 7)[None, :]
sales = rng.poisson(level * weekly).astype(np.float32)
covariates = rng.normal(size=(N_STORES, LOOKBACK, N_COVARIATES)).astype(np.float32)
scale = sales[:, :LOOKBACK].mean(axis=1, keepdims=True) + 1.0
history = np.concatenate([(sales[:, :LOOKBACK] / scale)[..., None], covariates], axis=-1)
target = sales[:, LOOKBACK:] / scale

features_all = tf.constant(history)
targets_all = tf.constant(target)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input((LOOKBACK, 1 + N_COVARIATES))
    x = keras.layers.Conv1D(32, 3, padding="causal", activation="relu")(inputs)
    x = keras.layers.LSTM(64, return_sequences=True)(x)
    x = keras.layers.LSTM(32)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(1)(x))


def make_train_chunk(model, optimizer):
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_chunk(features, targets, start):
        n_batches = tf.shape(features)[0] // args.batch_size
        total = tf.constant(0.0)
        for i in tf.range(args.steps_per_call):
            b = (start + i) % n_batches
            x = features[b * args.batch_size : (b + 1) * args.batch_size]
            y = targets[b * args.batch_size : (b + 1) * args.batch_size]
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += loss
        return total / tf.cast(args.steps_per_call, tf.float32)

    return train_chunk


def run(features, targets, label):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    optimizer.build(model.trainable_variables)
    train_chunk = make_train_chunk(model, optimizer)
    stamps = []
    for call in range(args.calls):
        loss = float(train_chunk(features, targets, tf.constant(call * args.steps_per_call)))
        stamps.append(time.perf_counter())
        if call % 10 == 0:
            print(f"[{label}] call {call}: loss={loss:.4f}")
    return float(np.mean(np.diff(stamps[4:])))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


full = run(features_all, targets_all, "stores")
report("steps_per_second", 1.0 / full)
summary = f"demand: {args.calls} calls x {args.steps_per_call} steps, {full * 1000:.1f} ms/call"

if args.truth:
    xb = features_all[: args.batch_size]
    yb = targets_all[: args.batch_size]
    compute = run(xb, yb, "cached")
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/call, input fraction {fraction:.2f}"
print(summary)
