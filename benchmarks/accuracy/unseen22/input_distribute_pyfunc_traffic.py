"""Road-traffic speed forecasting (loop detectors) trained with a MirroredStrategy custom loop."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--global-batch", type=int, default=64)
args = parser.parse_args()

SENSORS = 64
HISTORY = 48
HORIZON = 12
TIMESTEPS = 20_000
GLOBAL_BATCH = args.global_batch
SMOOTH = np.hanning(5).astype(np.float32) / np.hanning(5).sum()
STEPS = args.steps

rng = np.random.default_rng(9)
t = np.arange(TIMESTEPS, dtype=np.float32)
daily = 55 + 15 * np.sin(2 * np.pi * t / 288.0)[:, None]
speeds = (daily + rng.normal(0, 4, (TIMESTEPS, SENSORS))).astype(np.float32)
speeds[rng.random(speeds.shape) < 0.03] = np.nan  # detector dropouts


def make_window(start):
    start = int(start)
    window = speeds[start : start + HISTORY + HORIZON].copy()
    for s in range(SENSORS):
        col = window[:, s]
        bad = np.isnan(col)
        if bad.any():
            idx = np.arange(len(col))
            col[bad] = np.interp(idx[bad], idx[~bad], col[~bad])
        window[:HISTORY, s] = np.convolve(col[:HISTORY], SMOOTH, mode="same")
    mean = window[:HISTORY].mean(axis=0, keepdims=True)
    std = window[:HISTORY].std(axis=0, keepdims=True) + 1e-3
    window = (window - mean) / std
    return window[:HISTORY], window[HISTORY:]


def load_window(start):
    x, y = tf.py_function(make_window, [start], [tf.float32, tf.float32])
    x.set_shape((HISTORY, SENSORS))
    y.set_shape((HORIZON, SENSORS))
    return x, y


def dataset_fn(input_context):
    batch = input_context.get_per_replica_batch_size(GLOBAL_BATCH)
    starts = tf.data.Dataset.range(TIMESTEPS - HISTORY - HORIZON)
    starts = starts.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    ds = starts.shuffle(4096, seed=0).repeat()
    ds = ds.map(load_window)
    return ds.batch(batch, drop_remainder=True)


def cached_dataset_fn(batch):
    def fn(input_context):
        return tf.data.Dataset.from_tensors(batch).repeat()

    return fn


def build_model():
    inp = keras.Input((HISTORY, SENSORS))
    x = keras.layers.Conv1D(64, 3, padding="causal", activation="relu")(inp)
    x = keras.layers.LSTM(96)(x)
    x = keras.layers.Dense(HORIZON * SENSORS)(x)
    out = keras.layers.Reshape((HORIZON, SENSORS))(x)
    return keras.Model(inp, out)


strategy = tf.distribute.MirroredStrategy()
print("replicas:", strategy.num_replicas_in_sync)


def train(fn):
    keras.utils.set_random_seed(8)
    with strategy.scope():
        model = build_model()
        optimizer = keras.optimizers.Adam(1e-3)
    dist_ds = strategy.distribute_datasets_from_function(fn)

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            per_example = tf.reduce_mean(tf.square(pred - y), axis=[1, 2])
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_step(batch):
        per_replica = strategy.run(replica_step, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    durations = []
    it = iter(dist_ds)
    last = time.perf_counter()
    for step in range(STEPS):
        loss = float(train_step(next(it)))
        now = time.perf_counter()
        durations.append(now - last)
        last = now
        if step % 20 == 0:
            print(f"step {step}: mse={loss:.4f}")
    return float(np.mean(durations[5:]))


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(dataset_fn)
append_out({"steps_per_second": 1.0 / full})
msg = f"traffic: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
if args.truth:
    ctx = tf.distribute.InputContext()
    batch = next(iter(dataset_fn(ctx)))
    compute = train(cached_dataset_fn(batch))
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
