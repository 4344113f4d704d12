"""Seismic event classifier (earthquake / quarry blast / noise) on 3-component
waveforms.

Every event is stored as its own compressed .npz file.  A Python generator
opens one file per example with np.load, demeans it, band-pass filters it with
SciPy and normalises it; a custom training loop consumes the batches.
"""
import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
from scipy import signal
import tensorflow as tf
import keras

SAMPLES = 6000      # 60 s at 100 Hz
N_EVENTS = 600
BATCH = 32
STEPS = 60
EPOCHS = 2
CLASSES = 3


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def write_events(root, rng):
    paths = []
    t = np.arange(SAMPLES) / 100.0
    for i in range(N_EVENTS):
        label = int(rng.integers(0, CLASSES))
        wave = rng.normal(0, 1, size=(3, SAMPLES)).astype(np.float32)
        if label < 2:
            onset = rng.uniform(10, 40)
            freq = 4.0 if label == 0 else 9.0
            env = np.exp(-np.clip(t - onset, 0, None) / 6.0) * (t > onset)
            wave += (6 * env * np.sin(2 * np.pi * freq * t)).astype(np.float32)
        p = os.path.join(root, f"event_{i:05d}.npz")
        np.savez_compressed(p, wave=wave, label=np.int64(label), station=np.array(f"ST{i % 17:02d}"))
        paths.append(p)
    return paths


SOS = signal.butter(4, [1.0, 20.0], btype="bandpass", fs=100.0, output="sos")


def load_event(path):
    with np.load(path) as z:
        wave = z["wave"].astype(np.float64)
        label = int(z["label"])
    wave -= wave.mean(axis=1, keepdims=True)
    wave = signal.detrend(wave, axis=1)
    wave = signal.sosfiltfilt(SOS, wave, axis=1)
    wave /= np.abs(wave).max() + 1e-6
    return wave.T.astype(np.float32), label


def batches(paths, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.choice(len(paths), BATCH, replace=False)
        items = [load_event(paths[i]) for i in idx]
        yield np.stack([w for w, _ in items]), np.array([l for _, l in items], dtype=np.int32)


def build_model():
    inp = keras.Input((SAMPLES, 3))
    x = inp
    for f, k in ((24, 7), (40, 5), (56, 5), (80, 3)):
        x = keras.layers.Conv1D(f, k, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(CLASSES)(x))


def train(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    t0 = time.perf_counter()
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = next_batch()
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return seconds_per_step(gaps), time.perf_counter() - t0, loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="u34_input_npzshards_seismic_")
    try:
        paths = write_events(root, np.random.default_rng(3))
        gen = batches(paths, 11)
        full, wall, loss = train(lambda: next(gen))
        emit({"steps_per_second": 1.0 / full})
        msg = f"seismic: {1.0 / full:.2f} steps/s, loop {wall:.1f}s, loss {loss:.4f}"
        if args.truth:
            x1, y1 = next(batches(paths, 99))
            compute, _, _ = train(lambda: (x1, y1))
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
