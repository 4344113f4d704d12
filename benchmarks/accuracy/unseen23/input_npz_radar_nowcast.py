"""Precipitation nowcasting from stacks of weather-radar reflectivity frames.

Each sample lives in its own compressed .npz file (past frames + next frame).
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
from scipy import ndimage
import tensorflow as tf
import keras

N_SAMPLES = 1200
PAST = 6
SIZE = 64
BATCH_SIZE = 16
TOTAL_STEPS = 120
LR = 1e-3


def write_samples(out_dir, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    paths = []
    for i in range(N_SAMPLES):
        cx, cy = rng.uniform(10, 54, 2)
        vx, vy = rng.uniform(-2, 2, 2)
        width = rng.uniform(4, 12)
        frames = []
        for t in range(PAST + 1):
            blob = np.exp(-((xx - cx - vx * t) ** 2 + (yy - cy - vy * t) ** 2) / (2 * width**2))
            frames.append(55 * blob + rng.normal(0, 2, blob.shape))
        frames = np.clip(np.stack(frames), 0, 70).astype(np.float32)
        path = os.path.join(out_dir, f"scan_{i:05d}.npz")
        np.savez_compressed(
            path,
            past=frames[:PAST],
            future=frames[PAST:],
            quality=(rng.random((SIZE, SIZE)) > 0.02),
            lat=50.0 + yy / 100.0,
            lon=8.0 + xx / 100.0,
            meta=np.array([cx, cy, vx, vy, width]),
        )
        paths.append(path)
    return paths


def dbz_to_rain(dbz):
    return (10.0 ** (dbz / 10.0) / 200.0) ** (1.0 / 1.6)


def load_batch(paths):
    xs, ys = [], []
    for p in paths:
        with np.load(p) as sample:
            past = sample["past"]
            future = sample["future"]
            quality = sample["quality"]
            lat = sample["lat"]
        past = ndimage.median_filter(past, size=(1, 3, 3)) * quality
        rain = np.log1p(dbz_to_rain(past))
        scale = np.percentile(rain, 99) + 1e-3
        trend = np.diff(rain, axis=0, prepend=rain[:1]) / scale
        x = np.concatenate([rain / scale, trend, (lat - lat.mean())[None]], axis=0)
        xs.append(np.transpose(x, (1, 2, 0)))
        ys.append(np.transpose(np.log1p(dbz_to_rain(future)) / scale, (1, 2, 0)))
    return np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)


def batch_stream(paths, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(paths))
        for start in range(0, len(order) - BATCH_SIZE + 1, BATCH_SIZE):
            yield load_batch([paths[i] for i in order[start : start + BATCH_SIZE]])


def build_model():
    inp = keras.Input((SIZE, SIZE, 2 * PAST + 1))
    c1 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    p1 = keras.layers.MaxPooling2D()(c1)
    c2 = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(p1)
    p2 = keras.layers.MaxPooling2D()(c2)
    b = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(p2)
    u2 = keras.layers.UpSampling2D()(b)
    u2 = keras.layers.Concatenate()([u2, c2])
    u2 = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(u2)
    u1 = keras.layers.UpSampling2D()(u2)
    u1 = keras.layers.Concatenate()([u1, c1])
    u1 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(u1)
    out = keras.layers.Conv2D(1, 1)(u1)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(LR), loss="mse", metrics=["mae"])
    return model


def train(stream, label):
    model = build_model()
    times = []
    for step in range(TOTAL_STEPS):
        x, y = next(stream)
        loss, mae = model.train_on_batch(x, y)
        loss = float(loss)
        times.append(time.perf_counter())
        if (step + 1) % 20 == 0:
            print(f"[{label}] step {step + 1}/{TOTAL_STEPS} loss={loss:.5f} mae={float(mae):.4f}")
    return float(np.mean(np.diff(times)[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u23_input_npz_")
    try:
        paths = write_samples(workdir)
        print(f"wrote {len(paths)} radar samples")
        full = train(batch_stream(paths), "npz")
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full={full * 1000:.1f} ms/step"
        if args.truth:
            x, y = next(batch_stream(paths, seed=1))

            def same_batch():
                while True:
                    yield x, y

            compute = train(same_batch(), "cached")
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
        print(f"radar_nowcast: {summary} steps/s={1.0 / full:.2f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
