"""Transport-mode detection (walk / bike / bus / car / train) from raw GPS traces."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--trips", type=int, default=4000)
parser.add_argument("--batch-size", type=int, default=48)
parser.add_argument("--steps", type=int, default=120)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

MODES = ["walk", "bike", "bus", "car", "train"]
SEQ = 256
N_FEAT = 11


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((int(self.model.optimizer.iterations.numpy()), time.perf_counter()))

    def seconds_per_step(self, skip=5):
        marks = [m for m in self.marks if m[0] >= skip]
        return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


# raw traces: irregular timestamps, lat/lon
rng = np.random.default_rng(9)
trip_modes = rng.integers(0, len(MODES), args.trips)
traces = []
for m in trip_modes:
    n = int(rng.integers(300, 900))
    dt = rng.exponential(2.0 + m, n)
    ts = np.cumsum(dt)
    speed = (1.4, 4.5, 8.0, 13.0, 25.0)[m] * (1 + 0.3 * rng.normal(size=n))
    heading = np.cumsum(rng.normal(0, 0.2, n))
    lat = 52.0 + np.cumsum(speed * dt * np.cos(heading)) / 111_000
    lon = 13.0 + np.cumsum(speed * dt * np.sin(heading)) / 68_000
    traces.append(np.stack([ts, lat, lon], 1))


def haversine(lat1, lon1, lat2, lon2):
    lat1, lon1, lat2, lon2 = map(np.radians, (lat1, lon1, lat2, lon2))
    a = (
        np.sin((lat2 - lat1) / 2) ** 2
        + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * 6_371_000 * np.arcsin(np.sqrt(a))


def trip_features(trace):
    ts, lat, lon = trace[:, 0], trace[:, 1], trace[:, 2]
    grid = np.linspace(ts[0], ts[-1], SEQ)
    lat_r = np.interp(grid, ts, lat)
    lon_r = np.interp(grid, ts, lon)
    dt = np.gradient(grid)
    dist = np.concatenate([[0.0], haversine(lat_r[:-1], lon_r[:-1], lat_r[1:], lon_r[1:])])
    speed = dist / dt
    accel = np.gradient(speed, grid)
    jerk = np.gradient(accel, grid)
    bearing = np.arctan2(np.gradient(lon_r), np.gradient(lat_r))
    turn = np.abs(np.angle(np.exp(1j * np.gradient(bearing))))
    stop = (speed < 0.5).astype(np.float64)
    roll = np.convolve(speed, np.ones(9) / 9, mode="same")
    raw_speed = haversine(lat[:-1], lon[:-1], lat[1:], lon[1:]) / np.maximum(np.diff(ts), 1e-3)
    raw_speed = np.concatenate([[raw_speed[0]], raw_speed])
    padded = np.pad(raw_speed, (16, 15), mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, 32)
    p10, p50, p90 = np.percentile(windows, [10, 50, 90], axis=1)
    pct = np.stack([np.interp(grid, ts, p) for p in (p10, p50, p90)], 1)
    feats = np.stack([speed, accel, jerk, np.sin(bearing), np.cos(bearing), turn, stop, roll], 1)
    feats = np.concatenate([feats, pct], 1)
    feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-6)
    return feats.astype(np.float32)


def load_batch(batch_index):
    b = int(batch_index.numpy())
    idx = np.random.default_rng(b).integers(0, args.trips, args.batch_size)
    x = np.stack([trip_features(traces[i]) for i in idx])
    y = trip_modes[idx].astype(np.int32)
    return x, y


def tf_load_batch(batch_index):
    x, y = tf.py_function(load_batch, [batch_index], [tf.float32, tf.int32])
    x.set_shape((args.batch_size, SEQ, N_FEAT))
    y.set_shape((args.batch_size,))
    return x, y


train_ds = tf.data.Dataset.range(10**6).map(tf_load_batch)


def build_model():
    inputs = keras.Input(shape=(SEQ, N_FEAT))
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GRU(48)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(len(MODES))(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        steps_per_execution=4,
    )
    return model


clock = StepClock()
model = build_model()
model.fit(train_ds, epochs=1, steps_per_epoch=args.steps, callbacks=[clock], verbose=2)
sec_full = clock.seconds_per_step()
report("steps_per_second", 1.0 / sec_full)
print(f"transport mode: {args.steps} steps, {sec_full * 1000:.1f} ms/step")

if args.truth:
    batch = next(iter(train_ds))
    clock2 = StepClock()
    model2 = build_model()
    model2.fit(
        tf.data.Dataset.from_tensors(batch).repeat(),
        epochs=1,
        steps_per_epoch=args.steps,
        callbacks=[clock2],
        verbose=0,
    )
    sec_cached = clock2.seconds_per_step()
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
    )
