"""Seismic event classification (earthquake / quarry blast / noise) from
three-component waveform windows stored one event per .npz file."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf

N_EVENTS = 300
BATCH_SIZE = 32
STEPS = 110
N_SAMPLES = 12000
N_CHANNELS = 3
N_CLASSES = 3


def write_event_archive(root, n_events, seed=0):
    rng = np.random.default_rng(seed)
    paths, labels = [], []
    t = np.arange(N_SAMPLES) / 100.0
    for i in range(n_events):
        label = int(rng.integers(N_CLASSES))
        onset = rng.uniform(5, 20)
        env = np.where(t > onset, np.exp(-(t - onset) / (3.0 + 4.0 * label)), 0.0)
        freq = [4.0, 9.0, 1.5][label]
        wave = np.stack(
            [env * np.sin(2 * np.pi * freq * t + rng.uniform(0, 6)) for _ in range(N_CHANNELS)]
        )
        wave = wave + 0.8 * rng.normal(size=wave.shape)
        path = os.path.join(root, f"event_{i:05d}.npz")
        np.savez_compressed(
            path,
            waveform=(wave * 1.0e4).astype(np.float64),
            station=np.array(f"ST{i % 37:02d}"),
            sampling_rate=np.float32(100.0),
        )
        paths.append(path)
        labels.append(label)
    return paths, np.asarray(labels, np.int32)


def load_event(path):
    with np.load(path.numpy().decode()) as f:
        wave = f["waveform"]
    n = wave.shape[1]
    trend = np.polynomial.polynomial.polyfit(np.arange(n), wave.T, 1)
    wave = wave - (trend[0][:, None] + trend[1][:, None] * np.arange(n))
    taper = np.ones(n)
    ramp = int(0.05 * n)
    taper[:ramp] = 0.5 * (1 - np.cos(np.pi * np.arange(ramp) / ramp))
    taper[-ramp:] = taper[:ramp][::-1]
    wave = wave * taper
    peak = np.abs(wave).max() + 1e-6
    return (wave / peak).T.astype(np.float32)


def make_dataset(paths, labels):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(len(paths)).repeat()

    def _load(path, label):
        wave = tf.py_function(load_event, [path], tf.float32)
        wave.set_shape((N_SAMPLES, N_CHANNELS))
        return wave, label

    return ds.map(_load).batch(BATCH_SIZE)


def build_model():
    inp = keras.Input(shape=(N_SAMPLES, N_CHANNELS))
    x = keras.layers.Conv1D(32, 16, strides=8, padding="same", activation="relu")(inp)
    for filters, k in ((40, 7), (56, 5), (80, 3)):
        x = keras.layers.Conv1D(filters, k, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inp, out)


def train(dataset, steps):
    model = build_model()
    optimizer = keras.optimizers.Adam(5e-4)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step, (x, y) in enumerate(dataset.take(steps)):
        loss = train_step(x, y)
        loss_value = float(loss)
        stamps.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:4d}  loss {loss_value:.4f}")
    durations = np.diff(stamps)[4:]
    return float(np.mean(durations))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="u16_input_pyfunc_npz_seismic_events_")
    try:
        t0 = time.perf_counter()
        paths, labels = write_event_archive(root, N_EVENTS)
        print(f"wrote {len(paths)} event files in {time.perf_counter() - t0:.1f}s")
        full = train(make_dataset(paths, labels), STEPS)
        print(f"real input: {full * 1000:.1f} ms/step")
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            batch = next(iter(make_dataset(paths, labels)))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute = train(cached, STEPS)
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
