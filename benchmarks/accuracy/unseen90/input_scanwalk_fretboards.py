import time; T0 = time.perf_counter()
"""Guitar fret-level classification from laser profile scans, train_on_batch loop.

A bench laser profilometer is dragged along a guitar neck and returns one height
profile per string path across all 22 frets. A Python generator simulates each
scan (neck relief bow, fret crowns, a few high/low frets, sensor dropouts),
cleans it sample-by-sample (dropout fill, detrend against a straightedge fit,
crown-peak extraction) and yields batches. The model flags which fret zone
(none / low frets / middle / upper frets) needs levelling.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


N_FRETS = 22
SCALE_MM = 648.0
POINTS = 1200          # laser samples along the neck
BATCH = 32
STEPS = 600
POS = np.linspace(0.0, 480.0, POINTS)                               # mm from nut
FRET_POS = SCALE_MM - SCALE_MM / (2.0 ** (np.arange(1, N_FRETS + 1) / 12.0))


def scan_one(rng):
    relief = rng.uniform(0.05, 0.35)                                  # mm of bow
    profile = relief * np.sin(np.pi * POS / POS[-1])
    zone = int(rng.integers(0, 4))
    heights = rng.normal(1.2, 0.01, size=N_FRETS)
    if zone > 0:
        lo, hi = [(0, 7), (7, 14), (14, 22)][zone - 1]
        bad = rng.integers(lo, hi)
        heights[bad] += rng.choice([-1.0, 1.0]) * rng.uniform(0.04, 0.12)
    for f, h in zip(FRET_POS, heights):
        profile = profile + h * np.exp(-0.5 * ((POS - f) / 1.1) ** 2)
    profile = profile + rng.normal(0.0, 0.004, size=POINTS)
    drop = rng.random(POINTS) < 0.02
    profile[drop] = np.nan
    # --- cleaning, as done on the bench PC ---
    good = ~np.isnan(profile)
    profile = np.interp(POS, POS[good], profile[good])
    smooth = np.convolve(profile, np.ones(5) / 5.0, mode="same")
    crowns = np.empty(N_FRETS)
    for i, f in enumerate(FRET_POS):
        win = (POS > f - 3.0) & (POS < f + 3.0)
        crowns[i] = smooth[win].max()
    coef = np.polyfit(FRET_POS, crowns, 2)
    resid = crowns - np.polyval(coef, FRET_POS)
    rocker = crowns[1:-1] - 0.5 * (crowns[:-2] + crowns[2:])   # 3-fret rocker test
    feats = np.concatenate([resid * 20.0, rocker * 5.0, smooth[::12] - smooth.mean()]).astype(np.float32)
    return feats, zone


def scan_batches(seed):
    rng = np.random.default_rng(seed)
    while True:
        xs, ys = [], []
        for _ in range(BATCH):
            f, z = scan_one(rng)
            xs.append(f)
            ys.append(z)
        yield np.stack(xs), np.asarray(ys, dtype=np.int32)


def build_model(n_in):
    inp = keras.Input(shape=(n_in,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy")
    return model


def train(next_batch, n_in):
    keras.utils.set_random_seed(11)
    model = build_model(n_in)
    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(np.asarray(model.train_on_batch(x, y)).ravel()[0])
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    gen = scan_batches(2026)
    first = next(gen)
    n_in = first[0].shape[1]
    sec, loss = train(lambda: next(gen), n_in)
    emit({"steps_per_second": 1.0 / sec})
    summary = f"fretboards train_on_batch: {STEPS} steps, {sec*1000:.1f} ms/step, loss {loss:.4f}"
    if TRUTH:
        fixed = next(scan_batches(77))
        csec, _ = train(lambda: fixed, n_in)
        frac = min(max((sec - csec) / sec, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += f", compute-only {csec*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(summary + f", total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
