"""Wind-turbine fault forecasting from SCADA logs, custom training loop."""

import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

N_TURBINES = 30
ROWS_PER_TURBINE = 3000
WINDOW = 48
HISTORY = 24
BATCH_SIZE = 16
STEPS = 50
SENSORS = ["wind_speed", "rotor_rpm", "gen_temp", "gearbox_temp", "pitch", "power_kw"]


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def make_scada(rng):
    frames = []
    for tid in range(N_TURBINES):
        n = ROWS_PER_TURBINE
        ts = pd.date_range("2024-01-01", periods=n, freq="10min")
        wind = np.abs(8 + np.cumsum(rng.normal(0, 0.3, n)) % 10)
        df = pd.DataFrame(
            {
                "turbine": tid,
                "timestamp": ts,
                "wind_speed": wind,
                "rotor_rpm": wind * 1.7 + rng.normal(0, 0.5, n),
                "gen_temp": 55 + rng.normal(0, 2, n).cumsum() * 0.05,
                "gearbox_temp": 60 + rng.normal(0, 2, n).cumsum() * 0.05,
                "pitch": rng.uniform(0, 20, n),
                "power_kw": np.clip(wind**3 * 1.2, 0, 2000) + rng.normal(0, 30, n),
            }
        )
        df["fault"] = (df["gearbox_temp"].rolling(12, min_periods=1).max() > 63).astype(int)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def window_features(chunk):
    chunk = chunk.copy()
    chunk["hour"] = chunk["timestamp"].dt.hour
    roll_mean = chunk[SENSORS].rolling(HISTORY, min_periods=1).mean().add_suffix("_rm")
    roll_std = chunk[SENSORS].rolling(HISTORY, min_periods=1).std().fillna(0).add_suffix("_rs")
    hourly = chunk.groupby("hour")[SENSORS].transform("mean").add_suffix("_hm")
    diffs = chunk[SENSORS].diff().fillna(0).add_suffix("_d")
    feats = pd.concat([chunk[SENSORS], roll_mean, roll_std, hourly, diffs], axis=1)
    feats = (feats - feats.mean()) / (feats.std() + 1e-6)
    return feats.iloc[-WINDOW:].to_numpy(dtype=np.float32)


def batch_generator(scada, rng):
    for _ in range(STEPS):
        xs, ys = [], []
        for _ in range(BATCH_SIZE):
            tid = int(rng.integers(N_TURBINES))
            start = int(rng.integers(0, ROWS_PER_TURBINE - WINDOW - HISTORY - 6))
            base = tid * ROWS_PER_TURBINE + start
            chunk = scada.iloc[base : base + WINDOW + HISTORY]
            xs.append(window_features(chunk))
            ys.append(float(scada["fault"].iloc[base + WINDOW + HISTORY : base + WINDOW + HISTORY + 6].max()))
        yield np.stack(xs), np.asarray(ys, dtype=np.float32)[:, None]


def build_model(n_features):
    inputs = keras.Input(shape=(WINDOW, n_features))
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inputs)
    x = keras.layers.LSTM(256, return_sequences=True)(x)
    x = keras.layers.LSTM(128)(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inputs, outputs)


def train(batches, n_features):
    model = build_model(n_features)
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step, (x, y) in enumerate(batches):
        loss = train_step(x, y)
        loss_value = float(loss)
        times.append(time.perf_counter())
        if step % 10 == 0:
            print(f"step {step:3d} loss {loss_value:.4f}")
    return float(np.mean(np.diff(times)[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    scada = make_scada(rng)
    probe_x, probe_y = next(batch_generator(scada, np.random.default_rng(1)))
    n_features = probe_x.shape[-1]

    full = train(batch_generator(scada, rng), n_features)
    append_result(steps_per_second=1.0 / full)
    msg = f"turbines: {1.0 / full:.2f} steps/s over {STEPS} steps"

    if args.truth:
        compute = train(((probe_x, probe_y) for _ in range(STEPS)), n_features)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
