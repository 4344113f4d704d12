"""Precipitation nowcasting from radar frames; keeps every batch around for post-mortem debugging."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=310)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

FRAMES = 4
SIZE = 64
BATCH = args.batch_size
STEPS = args.steps

rng = np.random.default_rng(41)
base_field = rng.gamma(0.6, 2.0, (256, 256)).astype(np.float32)


def radar_batch(step):
    """Random crops of a drifting synthetic reflectivity field with a calibration gain."""
    xs = np.empty((BATCH, SIZE, SIZE, FRAMES), dtype=np.float32)
    ys = np.empty((BATCH, SIZE, SIZE, 1), dtype=np.float32)
    for i in range(BATCH):
        r, c = rng.integers(0, 256 - SIZE - FRAMES - 1, 2)
        for f in range(FRAMES + 1):
            crop = base_field[r + f : r + f + SIZE, c + f : c + f + SIZE]
            if f < FRAMES:
                xs[i, :, :, f] = crop
            else:
                ys[i, :, :, 0] = crop
    xs *= np.float32(rng.uniform(0.95, 1.05))
    return xs, ys


def build_model():
    inp = keras.Input((SIZE, SIZE, FRAMES))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    out = keras.layers.Conv2D(1, 1, activation="softplus")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse")
    return model


def train(get_batch):
    keras.utils.set_random_seed(14)
    model = build_model()
    debug_batches = {}
    durations = []
    last = time.perf_counter()
    for step in range(STEPS):
        x, y = get_batch(step)
        # keep inputs so a NaN loss can be traced back to the exact batch
        debug_batches[step] = {
            "x": x.copy(),
            "y": y.copy(),
            "x_log": np.log1p(np.maximum(x, 0)),
        }
        loss = float(model.train_on_batch(x, y))
        if not np.isfinite(loss):
            np.savez("bad_batch.npz", **debug_batches[step])
            raise RuntimeError(f"non-finite loss at step {step}")
        now = time.perf_counter()
        durations.append(now - last)
        last = now
        if step % 25 == 0:
            print(f"step {step}: mse={loss:.4f} kept batches={len(debug_batches)}")
    return float(np.mean(durations[5:]))


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(radar_batch)
append_out({"steps_per_second": 1.0 / full})
msg = f"radar: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
if args.truth:
    fixed = radar_batch(0)
    compute = train(lambda step: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
