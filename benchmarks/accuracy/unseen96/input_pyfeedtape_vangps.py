"""Delivery-van GPS traces -> remaining-stops regression.

Input path: a plain Python loop builds every batch on the fly: per van it simulates a
raw GPS trace, computes haversine step distances, speeds, headings and dwell flags with
numpy, resamples to a fixed grid, then calls a custom @tf.function GradientTape step.
Known bottleneck: per-trace Python/numpy feature building in the loop (input-bound).
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 180
RAW_POINTS = 200
GRID = 128
CHANNELS = 6
EARTH_R = 6371000.0


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def seconds_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def van_trace(rng):
    lat0, lon0 = 52.2 + rng.uniform(-0.2, 0.2), 0.12 + rng.uniform(-0.3, 0.3)
    stops = int(rng.integers(5, 40))
    t = np.cumsum(rng.uniform(4.0, 12.0, RAW_POINTS))
    heading = np.cumsum(rng.normal(0, 0.25, RAW_POINTS))
    speed = np.clip(rng.normal(9.0, 3.0, RAW_POINTS), 0, None)
    dwell = rng.random(RAW_POINTS) < stops / RAW_POINTS
    speed[dwell] = 0.0
    dt = np.diff(t, prepend=t[0])
    lat = lat0 + np.cumsum(speed * dt * np.cos(heading)) / 111320.0
    lon = lon0 + np.cumsum(speed * dt * np.sin(heading)) / (111320.0 * np.cos(np.radians(lat0)))
    lat = lat + rng.normal(0, 2e-5, RAW_POINTS)
    lon = lon + rng.normal(0, 2e-5, RAW_POINTS)
    return t, lat, lon, stops


def trace_features(t, lat, lon):
    feats = []
    # per-fix haversine and bearing, done fix by fix as the telematics parser does
    dist = [0.0]
    bear = [0.0]
    for i in range(1, len(t)):
        p1, p2 = np.radians(lat[i - 1]), np.radians(lat[i])
        dphi = p2 - p1
        dlmb = np.radians(lon[i] - lon[i - 1])
        a = np.sin(dphi / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlmb / 2) ** 2
        dist.append(2 * EARTH_R * np.arcsin(np.sqrt(a)))
        bear.append(np.arctan2(np.sin(dlmb) * np.cos(p2), np.cos(p1) * np.sin(p2) - np.sin(p1) * np.cos(p2) * np.cos(dlmb)))
    dist = np.array(dist)
    bear = np.array(bear)
    dt = np.maximum(np.diff(t, prepend=t[0]), 1e-3)
    spd = dist / dt
    grid = np.linspace(t[0], t[-1], GRID)
    for series in (spd / 15.0, np.sin(bear), np.cos(bear), (spd < 0.5).astype(float),
                   (lat - lat.mean()) * 100.0, (lon - lon.mean()) * 100.0):
        feats.append(np.interp(grid, t, series))
    return np.stack(feats, axis=-1).astype(np.float32)


def make_batch(rng):
    x = np.zeros((BATCH, GRID, CHANNELS), np.float32)
    y = np.zeros((BATCH, 1), np.float32)
    for i in range(BATCH):
        t, lat, lon, stops = van_trace(rng)
        x[i] = trace_features(t, lat, lon)
        y[i, 0] = stops / 40.0
    return x, y


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((GRID, CHANNELS))
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    return keras.Model(inp, out)


def train(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    last = None
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return seconds_per_step(gaps), loss


rng = np.random.default_rng(96)
full, loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"vangps: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, loss {loss:.4f}, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    fixed = make_batch(np.random.default_rng(97))
    compute, _ = train(lambda: fixed)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"vangps truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
