"""Store-item weekly demand forecasting; whole epoch compiled into one tf.function."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--steps-per-epoch", type=int, default=60)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

HISTORY = 104  # two years of weeks
HORIZON = 8
N_STORES, N_ITEMS = 50, 400


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


rng = np.random.default_rng(5)
weeks = HISTORY + HORIZON + 52
base_level = rng.gamma(3.0, 10.0, (N_STORES, N_ITEMS))
season = 1 + 0.3 * np.sin(2 * np.pi * np.arange(weeks) / 52)


def sales_windows():
    """Builds one training window at a time from the raw sales ledger."""
    while True:
        store = int(rng.integers(N_STORES))
        item = int(rng.integers(N_ITEMS))
        start = int(rng.integers(0, weeks - HISTORY - HORIZON))
        level = base_level[store, item]
        series = []
        promo = []
        since_promo = []
        last_promo = -52
        for w in range(start, start + HISTORY + HORIZON):
            on_promo = 1.0 if (w * 7 + item) % 13 == 0 else 0.0
            price = 4.99 * (0.8 if on_promo else 1.0)
            elasticity = (4.99 / price) ** 1.8
            qty = max(0.0, level * season[w] * elasticity + rng.normal(0, 3))
            if on_promo:
                last_promo = w
            series.append(qty)
            promo.append(on_promo)
            since_promo.append(min(w - last_promo, 52) / 52.0)
        series = np.asarray(series, dtype=np.float32)
        scale = series[:HISTORY].mean() + 1.0
        hist = np.stack(
            [
                series[:HISTORY] / scale,
                np.asarray(promo[:HISTORY], np.float32),
                np.asarray(since_promo[:HISTORY], np.float32),
                np.log1p(series[:HISTORY]),
                np.convolve(series[:HISTORY], np.ones(4) / 4, mode="same") / scale,
            ],
            axis=-1,
        )
        yield hist, series[HISTORY:] / scale


dataset = tf.data.Dataset.from_generator(
    sales_windows,
    output_signature=(
        tf.TensorSpec((HISTORY, 5), tf.float32),
        tf.TensorSpec((HORIZON,), tf.float32),
    ),
).batch(args.batch_size)


def build_model():
    inputs = keras.Input((HISTORY, 5))
    x = layers.Conv1D(32, 5, padding="causal", activation="relu")(inputs)
    x = layers.Conv1D(32, 5, dilation_rate=2, padding="causal", activation="relu")(x)
    x = layers.Conv1D(64, 5, dilation_rate=4, padding="causal", activation="relu")(x)
    x = layers.Conv1D(64, 5, dilation_rate=8, padding="causal", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(128, activation="relu")(x)
    outputs = layers.Dense(HORIZON)(x)
    return keras.Model(inputs, outputs)


def train(iterator):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    steps = tf.constant(args.steps_per_epoch)

    @tf.function
    def train_epoch():
        total = tf.constant(0.0)
        for _ in tf.range(steps):
            x, y = next(iterator)
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
                loss = tf.reduce_mean(tf.abs(pred - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += loss
        return total / tf.cast(steps, tf.float32)

    per_step = []
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        mae = float(train_epoch())
        dt = time.perf_counter() - t0
        per_step.append(dt / args.steps_per_epoch)
        print(f"epoch {epoch + 1}: mae {mae:.4f}  {dt:.2f}s")
    return float(np.mean(per_step[1:]))


full = train(iter(dataset))
print(f"generator input: {full * 1000:.1f} ms/step")
report("steps_per_second", 1.0 / full)

if args.truth:
    fixed_batch = next(iter(dataset))
    compute = train(iter(tf.data.Dataset.from_tensors(fixed_batch).repeat()))
    frac = min(1.0, max(0.0, (full - compute) / full))
    report("truth_input_fraction", frac)
    print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")

print(f"done: {args.epochs} epochs x {args.steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
