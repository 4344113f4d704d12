"""Freeway traffic speed forecaster (12 x 5-min horizon) for a loop-detector network."""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf

N_SENSORS = 207
N_STEPS_TOTAL = 17_280  # 60 days of 5-minute readings
HISTORY = 12
HORIZON = 12
BATCH_SIZE = 64
TRAIN_STEPS = 420
SEED = 41


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def mean_step_seconds(stamps, start, skip=5):
    times = [start] + stamps
    return float(np.mean(np.diff(times)[skip:]))


# ---------------------------------------------------------------- data
def make_speed_series(seed):
    rng = np.random.default_rng(seed)
    t = np.arange(N_STEPS_TOTAL)
    tod = (t % 288) / 288.0
    rush = np.exp(-(((tod - 0.33) / 0.04) ** 2)) + np.exp(-(((tod - 0.73) / 0.05) ** 2))
    free_flow = rng.uniform(55, 70, N_SENSORS)
    drop = rng.uniform(10, 35, N_SENSORS)
    speed = (
        free_flow[None] - drop[None] * rush[:, None] + rng.normal(0, 2, (N_STEPS_TOTAL, N_SENSORS))
    )
    series = np.stack([speed, np.repeat(tod[:, None], N_SENSORS, 1)], -1)
    return series.astype("float32")


SERIES = make_speed_series(SEED)
SPEED_MEAN = SERIES[..., 0].mean()
SPEED_STD = SERIES[..., 0].std()


def sample_batch(rng):
    starts = rng.integers(0, N_STEPS_TOTAL - HISTORY - HORIZON, BATCH_SIZE)
    idx = starts[:, None] + np.arange(HISTORY + HORIZON)[None]
    window = SERIES[idx]
    x = window[:, :HISTORY].copy()
    x[..., 0] = (x[..., 0] - SPEED_MEAN) / SPEED_STD
    y = (window[:, HISTORY:, :, 0] - SPEED_MEAN) / SPEED_STD
    return x.astype("float64"), y.astype("float32")


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(HISTORY, N_SENSORS, 2))
    x = keras.layers.Reshape((HISTORY, N_SENSORS * 2))(inputs)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(HORIZON * N_SENSORS)(x)
    outputs = keras.layers.Reshape((HORIZON, N_SENSORS))(x)
    return keras.Model(inputs, outputs, name="speed_forecaster")


def train(fixed_batch=None):
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean(tf.abs(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, pred

    # keep everything needed for the per-sensor residual report at the end
    residual_log = []
    stamps = []
    start = time.perf_counter()
    for step in range(TRAIN_STEPS):
        x, y = sample_batch(rng) if fixed_batch is None else fixed_batch
        loss, pred = train_step(tf.constant(x, tf.float32), y)
        loss = float(loss)
        residual_log.append({"x": x, "y": y, "pred": pred.numpy(), "loss": loss})
        stamps.append(time.perf_counter())
        if step % 50 == 0:
            print(f"step {step:3d}  mae {loss * SPEED_STD:.2f} mph")

    errors = np.stack([np.abs(r["pred"] - r["y"]).mean(axis=(0, 1)) for r in residual_log[-50:]])
    worst = np.argsort(errors.mean(0))[-3:]
    print(
        "worst sensors (last 50 batches):",
        worst.tolist(),
        (errors.mean(0)[worst] * SPEED_STD).round(2).tolist(),
    )
    return mean_step_seconds(stamps, start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    sec = train()
    append_result(steps_per_second=1.0 / sec)
    summary = f"traffic: {sec * 1000:.1f} ms/step"

    if args.truth:
        compute = train(fixed_batch=sample_batch(np.random.default_rng(SEED + 1)))
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
