"""Fault detection on wind-turbine gearbox vibration windows (custom training loop)."""

import argparse
import json
import math
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=600)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--window", type=int, default=512)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_TURBINES = 24
CHANNELS = 3
SEGMENTS = 16
N_CLASSES = 4

# ---------------------------------------------------------------- data
rng = np.random.default_rng(11)
signal_len = 60_000
t = np.arange(signal_len) / 2000.0
raw_signals = []
fault_type = rng.integers(0, N_CLASSES, size=N_TURBINES)
for k in range(N_TURBINES):
    base = np.stack(
        [np.sin(2 * np.pi * (25 + 3 * c) * t + rng.uniform(0, 6)) for c in range(CHANNELS)], -1
    )
    fault = 0.3 * fault_type[k] * np.sin(2 * np.pi * 140 * t)[:, None]
    raw_signals.append((base + fault + 0.5 * rng.standard_normal(base.shape)).astype(np.float32))


def window_features(window):
    """Per-window cleaning and hand-made condition indicators."""
    cleaned = []
    stats = []
    for c in range(CHANNELS):
        x = window[:, c].tolist()
        mean = sum(x) / len(x)
        x = [v - mean for v in x]
        var = sum(v * v for v in x) / len(x)
        std = math.sqrt(var) + 1e-6
        x = [v / std for v in x]
        seg = len(x) // SEGMENTS
        for s in range(SEGMENTS // 4):
            chunk = x[s * seg : (s + 1) * seg]
            rms = math.sqrt(sum(v * v for v in chunk) / seg)
            peak = max(abs(v) for v in chunk)
            stats.extend([rms, peak / (rms + 1e-6)])
        kurt = sum(v**4 for v in x) / len(x)
        stats.append(kurt / 3.0)
        cleaned.append(x)
    return np.asarray(cleaned, np.float32).T, np.asarray(stats, np.float32)


def vibration_windows():
    while True:
        k = int(rng.integers(N_TURBINES))
        start = int(rng.integers(0, signal_len - args.window))
        window, stats = window_features(raw_signals[k][start : start + args.window])
        yield {"wave": window, "stats": stats}, np.int32(fault_type[k])


n_stats = CHANNELS * (2 * (SEGMENTS // 4) + 1)
dataset = tf.data.Dataset.from_generator(
    vibration_windows,
    output_signature=(
        {
            "wave": tf.TensorSpec((args.window, CHANNELS), tf.float32),
            "stats": tf.TensorSpec((n_stats,), tf.float32),
        },
        tf.TensorSpec((), tf.int32),
    ),
)
dataset = dataset.batch(args.batch_size).prefetch(1)
it = iter(dataset)


# ---------------------------------------------------------------- model
def build_model():
    wave = keras.Input((args.window, CHANNELS), name="wave")
    stats = keras.Input((n_stats,), name="stats")
    x = wave
    for filters in (32, 48, 64):
        x = keras.layers.Conv1D(filters, 5, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Concatenate()([x, stats])
    x = keras.layers.Dense(128, activation="relu")(x)
    return keras.Model([wave, stats], keras.layers.Dense(N_CLASSES)(x))


model = build_model()
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step():
    x, y = next(it)
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def run(label):
    stamps = []
    for step in range(args.steps):
        loss = float(train_step())
        stamps.append(time.perf_counter())
        if step % 50 == 0:
            print(f"[{label}] step {step}: loss={loss:.4f}")
    return float(np.mean(np.diff(stamps[4:])))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


full = run("generator")
report("steps_per_second", 1.0 / full)
summary = f"turbine: {args.steps} steps, {full * 1000:.1f} ms/step"

if args.truth:
    cached_batch = next(it)
    it = iter(tf.data.Dataset.from_tensors(cached_batch).repeat())
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    train_step = tf.function(train_step.python_function)
    compute = run("cached")
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
print(summary)

# release the generator-backed iterator before interpreter shutdown
del it
