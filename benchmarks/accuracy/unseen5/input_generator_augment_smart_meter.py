# Classifies households by their main heating/cooling appliance from one week of smart-meter
# readings (15-minute kWh, 672 values). The readings sit in memory as NumPy arrays; a
# Python generator draws a batch and augments every curve on the fly, one at a time: time
# warping and magnitude warping through random smooth knots (np.interp), a random shift of
# the week, window slicing stretched back to full length, spikes from a kettle or oven,
# simulated meter outages filled back in, per-day standardisation, a rolling-minimum base
# load and a smoothed trend. The generator is passed straight to model.fit.
import argparse

import keras
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from truth import measure, timed_fit

POINTS, DAY, HOUSES, BATCH, KINDS = 672, 96, 5000, 64, 5


def make_readings(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(POINTS)
    hour = (t % DAY) / 4
    kinds = rng.integers(0, KINDS, HOUSES)
    base = rng.gamma(2.0, 0.08, (HOUSES, 1)) + 0.05
    morning = np.exp(-((hour - 7.5) ** 2) / 2)
    evening = np.exp(-((hour - 19) ** 2) / 4)
    night = ((hour < 6) | (hour > 22)).astype(float)
    midday = np.exp(-((hour - 14) ** 2) / 6)
    shapes = np.stack([morning + evening, night * 1.5, midday * 1.2, evening * 2, 0.3 + 0 * t])
    curves = base + shapes[kinds] * rng.uniform(0.2, 0.8, (HOUSES, 1))
    curves += rng.gamma(1.0, 0.03, (HOUSES, POINTS))
    return curves.astype(np.float32), kinds.astype(np.int32)


def smooth_curve(rng, knots, sigma):
    return np.interp(
        np.arange(POINTS), np.linspace(0, POINTS - 1, knots), rng.normal(1, sigma, knots)
    )


def augment(curve, rng):
    speed = smooth_curve(rng, 8, 0.2).clip(0.3, None)
    warped_t = np.cumsum(speed)
    warped_t = (warped_t - warped_t[0]) / (warped_t[-1] - warped_t[0]) * (POINTS - 1)
    curve = np.interp(np.arange(POINTS), warped_t, curve)
    curve = curve * smooth_curve(rng, 6, 0.15)
    curve = np.roll(curve, int(rng.integers(0, DAY)) * int(rng.integers(0, 7)))
    length = int(rng.integers(POINTS * 3 // 4, POINTS))
    start = int(rng.integers(0, POINTS - length + 1))
    curve = np.interp(np.linspace(start, start + length - 1, POINTS), np.arange(POINTS), curve)
    for _ in range(int(rng.integers(0, 24))):
        at = int(rng.integers(0, POINTS - 2))
        curve[at : at + int(rng.integers(1, 3))] += rng.uniform(0.3, 0.8)
    valid = np.ones(POINTS, bool)
    for _ in range(int(rng.integers(1, 6))):  # meter outages, filled back in linearly
        at = int(rng.integers(1, POINTS - 40))
        valid[at : at + int(rng.integers(4, 40))] = False
    points = np.flatnonzero(valid)
    curve = np.interp(np.arange(POINTS), points, curve[points])
    days = curve.reshape(7, DAY)
    days = (days - days.mean(1, keepdims=True)) / (days.std(1, keepdims=True) + 1e-3)
    level = np.full(POINTS, np.log1p(curve.mean()))
    padded = np.concatenate([curve[:8], curve, curve[-7:]])
    base = sliding_window_view(padded, 16).min(1)[:POINTS]
    trend = np.convolve(curve, np.hanning(33) / np.hanning(33).sum(), mode="same")
    return np.stack([days.ravel(), level, np.log1p(base), np.log1p(trend)], -1)


def batches(readings, kinds, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        chosen = rng.integers(0, HOUSES, BATCH)
        x = np.stack([augment(readings[i], rng) for i in chosen]).astype(np.float32)
        yield x, kinds[chosen]


def build_model():
    inputs = keras.Input((POINTS, 4))
    h = keras.layers.Conv1D(24, 9, padding="same", activation="relu")(inputs)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(48, 7, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    model = keras.Model(inputs, keras.layers.Dense(KINDS, activation="softmax")(h))
    model.compile(
        keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    readings, kinds = make_readings()
    model = build_model()
    timed_fit(model, batches(readings, kinds), 200)
    measure(model, lambda: batches(readings, kinds, seed=1), 200)
