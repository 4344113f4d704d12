"""Multi-sensor forecasting with a train_on_batch loop.

Windows are cut from long synthetic sensor recordings by a Python
generator wrapped in tf.data.Dataset.from_generator. Each window is
detrended (np.polyfit), rolling statistics are computed, and it is
augmented with jitter, scaling and time warping (np.interp). No
prefetch; the loop calls model.train_on_batch on every batch.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

WINDOW = 128
HORIZON = 16
CHANNELS = 4
BATCH = 64
STEPS = 300


def make_recordings(n_rec=20, length=20000, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(length, dtype=np.float64)
    recs = []
    for _ in range(n_rec):
        period = rng.uniform(40, 200)
        base = np.sin(2 * np.pi * t / period) + 0.001 * t * rng.uniform(-1, 1)
        chans = [base + 0.2 * rng.standard_normal(length)]
        for _ in range(1, CHANNELS):
            lag = int(rng.integers(1, 20))
            chans.append(
                np.roll(base, lag) * rng.uniform(0.5, 2.0) + 0.3 * rng.standard_normal(length)
            )
        recs.append(np.stack(chans, axis=1))
    return recs


def rolling_stats(x, k=8):
    pad = np.zeros((1, x.shape[1]))
    s1 = np.cumsum(np.vstack([pad, x]), axis=0)
    s2 = np.cumsum(np.vstack([pad, x * x]), axis=0)
    idx = np.arange(1, len(x) + 1)
    lo = np.maximum(0, idx - k)
    counts = (idx - lo)[:, None]
    means = (s1[idx] - s1[lo]) / counts
    var = (s2[idx] - s2[lo]) / counts - means**2
    return means, np.sqrt(np.maximum(var, 0.0))


def time_warp(x, rng, strength=0.1):
    n = len(x)
    knots = np.linspace(0, n - 1, 6)
    warped = knots + rng.normal(0, strength * n / 6, size=6)
    warped[0], warped[-1] = 0, n - 1
    warped = np.sort(warped)
    src = np.interp(np.arange(n), knots, warped)
    return np.stack([np.interp(src, np.arange(n), x[:, c]) for c in range(x.shape[1])], axis=1)


def window_generator(recordings, seed=0):
    rng = np.random.default_rng(seed)
    tt = np.arange(WINDOW)
    while True:
        rec = recordings[rng.integers(len(recordings))]
        start = int(rng.integers(0, len(rec) - WINDOW - HORIZON))
        hist = rec[start : start + WINDOW].copy()
        target = rec[start + WINDOW : start + WINDOW + HORIZON, 0].copy()
        # detrend each channel with a linear fit, apply same trend to target
        for c in range(CHANNELS):
            slope, icpt = np.polyfit(tt, hist[:, c], 1)
            hist[:, c] -= slope * tt + icpt
            if c == 0:
                target -= slope * np.arange(WINDOW, WINDOW + HORIZON) + icpt
        hist = time_warp(hist, rng) * rng.uniform(0.8, 1.2)
        hist += rng.normal(0, 0.03, size=hist.shape)
        mu, sd = rolling_stats(hist)
        feats = np.concatenate([hist, mu, sd], axis=1).astype(np.float32)
        yield feats, target.astype(np.float32)


def build_model():
    inp = keras.Input((WINDOW, 3 * CHANNELS))
    x = keras.layers.Conv1D(48, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(48, 5, padding="causal", activation="relu", dilation_rate=2)(x)
    x = keras.layers.GRU(48)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(HORIZON)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss="mse", metrics=["mae"])
    return model


def train(model, batches, steps):
    durations = []
    last = time.perf_counter()
    for i, (x, y) in enumerate(batches):
        if i >= steps:
            break
        loss, mae = model.train_on_batch(x, y)
        if i % 50 == 0:
            print(f"[{i}] mse={loss:.4f} mae={mae:.4f}")
        now = time.perf_counter()
        durations.append(now - last)
        last = now
    return durations[5:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    recordings = make_recordings()
    ds = tf.data.Dataset.from_generator(
        lambda: window_generator(recordings),
        output_signature=(
            tf.TensorSpec((WINDOW, 3 * CHANNELS), tf.float32),
            tf.TensorSpec((HORIZON,), tf.float32),
        ),
    ).batch(BATCH)

    model = build_model()
    d = train(model, ds, STEPS)
    full = float(np.mean(d))
    sps = len(d) / float(np.sum(d))
    print(f"steps_per_second={sps:.2f}")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({"steps_per_second": sps}) + "\n")

    if args.truth:
        one = next(iter(ds))
        d2 = train(model, tf.data.Dataset.from_tensors(one).repeat(), STEPS)
        compute = float(np.mean(d2))
        frac = min(1.0, max(0.0, (full - compute) / full))
        print(
            f"truth_input_fraction={frac:.3f} full={full * 1e3:.1f}ms compute={compute * 1e3:.1f}ms"
        )
        if out:
            with open(out, "a") as fh:
                fh.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
