"""Transport-mode detection (walk / bike / bus / car / train) from raw GPS tracks.

Each example is a raw GPS trace (lat, lon, timestamp at irregular 1-5 s intervals).
A Python generator simulates a trace, then does the usual feature engineering in
numpy and plain Python: haversine distances, speeds, accelerations, jerk, bearing
changes, a stop detector, and resampling of everything onto a fixed 128-point grid.
The model (Conv1D + pooling) is trained with a manual loop around
``model.train_on_batch``, pulling one batch at a time from the generator.

Run ``python input_trainonbatch_gps_modes.py [--truth]``.
"""

import argparse
import json
import math
import os
import time

import keras
import numpy as np

MODES = ["walk", "bike", "bus", "car", "train"]
SPEED_MPS = [1.4, 4.5, 8.0, 13.0, 25.0]
POINTS = 128
BATCH = 48
STEPS = 180
EARTH_R = 6_371_000.0


def simulate_track(rng, mode):
    n = int(rng.integers(120, 340))
    dt = rng.uniform(1, 5, size=n)
    speed = np.abs(SPEED_MPS[mode] * (1 + 0.3 * np.sin(np.cumsum(dt) / 40)) + rng.normal(0, 1, n))
    if mode == 2:
        speed[rng.random(n) < 0.15] = 0.0
    heading = np.cumsum(rng.normal(0, 0.15 if mode < 2 else 0.05, n))
    lat, lon = [48.85], [2.35]
    for i in range(1, n):
        step = speed[i] * dt[i] / EARTH_R
        lat.append(lat[-1] + math.degrees(step * math.cos(heading[i])))
        lon.append(
            lon[-1] + math.degrees(step * math.sin(heading[i])) / math.cos(math.radians(lat[-1]))
        )
    return np.array(lat), np.array(lon), np.cumsum(dt)


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dphi = p2 - p1
    dlmb = math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dlmb / 2) ** 2
    return 2 * EARTH_R * math.asin(math.sqrt(a))


def bearing(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x))


def track_features(lat, lon, t):
    dist = [haversine(lat[i - 1], lon[i - 1], lat[i], lon[i]) for i in range(1, len(lat))]
    head = [bearing(lat[i - 1], lon[i - 1], lat[i], lon[i]) for i in range(1, len(lat))]
    dist, head, dt = np.array(dist), np.array(head), np.diff(t)
    speed = dist / dt
    accel = np.diff(speed, prepend=speed[0]) / dt
    jerk = np.diff(accel, prepend=accel[0]) / dt
    turn = np.abs((np.diff(head, prepend=head[0]) + 180) % 360 - 180)
    stopped = (speed < 0.5).astype(np.float64)
    grid = np.linspace(t[1], t[-1], POINTS)
    cols = [speed / 30, accel / 5, jerk / 5, turn / 180, stopped]
    return np.stack([np.interp(grid, t[1:], c) for c in cols], axis=1)


def gps_batches(batch_size, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        modes = rng.integers(0, len(MODES), size=batch_size)
        x = np.stack([track_features(*simulate_track(rng, m)) for m in modes])
        yield x.astype(np.float32), modes.astype(np.int32)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((POINTS, 5)),
            keras.layers.Conv1D(96, 7, padding="same", activation="relu"),
            keras.layers.Conv1D(96, 7, padding="same", activation="relu"),
            keras.layers.MaxPooling1D(2),
            keras.layers.Conv1D(192, 5, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(len(MODES), activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train_loop(next_batch, steps):
    model = build_model()
    started = None
    for step in range(steps):
        if step == 5:
            started = time.perf_counter()
        x, y = next_batch()
        loss, acc = model.train_on_batch(x, y)
        if step % 50 == 0:
            print(f"step {step}: loss={loss:.3f} acc={acc:.3f}")
    return (time.perf_counter() - started) / (steps - 5)


def emit(**kv):
    target = os.environ.get("ACCURACY_OUT")
    if target:
        with open(target, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    batches = gps_batches(BATCH)
    full = train_loop(lambda: next(batches), STEPS)
    emit(steps_per_second=1 / full)
    report = f"gps transport modes: {1 / full:.2f} steps/s"
    if args.truth:
        fixed = next(gps_batches(BATCH, seed=3))
        compute = train_loop(lambda: fixed, STEPS)
        fraction = min(1.0, max(0.0, (full - compute) / full))
        emit(truth_input_fraction=fraction)
        report += (
            f" (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, input {fraction:.2f})"
        )
    print(report)


if __name__ == "__main__":
    main()
