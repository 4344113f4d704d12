"""Seismic event picker: classifies 3-component waveform windows (noise / P / S / quake)."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_WINDOWS = 24000
N_SAMPLES = 1024
N_COMPONENTS = 3
N_CLASSES = 4
BATCH_SIZE = 64
STEPS = 160


def write_archive(root, rng):
    path = os.path.join(root, "waveforms.npy")
    arr = np.lib.format.open_memmap(
        path, mode="w+", dtype=np.float32, shape=(N_WINDOWS, N_SAMPLES, N_COMPONENTS)
    )
    labels = rng.integers(0, N_CLASSES, N_WINDOWS).astype(np.int32)
    t = np.arange(N_SAMPLES)
    for start in range(0, N_WINDOWS, 4000):
        n = min(4000, N_WINDOWS - start)
        chunk = rng.standard_normal((n, N_SAMPLES, N_COMPONENTS)).astype(np.float32)
        onset = rng.integers(200, 800, n)
        lab = labels[start : start + n]
        burst = (t[None, :] > onset[:, None]) * np.exp(-(t[None, :] - onset[:, None]) / 150.0)
        chunk += (lab[:, None, None] > 0) * 4.0 * burst[:, :, None].astype(np.float32)
        arr[start : start + n] = chunk
    arr.flush()
    del arr
    np.save(os.path.join(root, "labels.npy"), labels)
    return path, os.path.join(root, "labels.npy")


def taper_and_filter(x, rng):
    spec = np.fft.rfft(x, axis=0)
    freqs = np.fft.rfftfreq(x.shape[0], d=0.01)
    lo, hi = rng.uniform(0.5, 2.0), rng.uniform(15.0, 30.0)
    spec[(freqs < lo) | (freqs > hi)] = 0
    x = np.fft.irfft(spec, n=x.shape[0], axis=0)
    return x * np.hanning(x.shape[0])[:, None]


def batch_stream(waves, labels, rng):
    while True:
        idx = rng.integers(0, len(labels), BATCH_SIZE)
        xs = []
        for i in idx:
            x = np.array(waves[i], dtype=np.float64)
            t = np.arange(N_SAMPLES)
            for c in range(N_COMPONENTS):
                slope, icpt = np.polyfit(t, x[:, c], 1)
                x[:, c] -= slope * t + icpt
            noise = np.array(waves[rng.integers(0, len(labels))], dtype=np.float64)
            x = x + rng.uniform(0.0, 0.3) * (noise - noise.mean(axis=0))
            x = x / (np.abs(x).max(axis=0) + 1e-6)
            x = np.roll(x, int(rng.integers(-100, 100)), axis=0)
            x = taper_and_filter(x, rng)
            x = x * rng.uniform(0.8, 1.2, size=(1, N_COMPONENTS))
            x = x + 0.02 * rng.standard_normal(x.shape)
            xs.append(x.astype(np.float32))
        yield np.stack(xs), labels[idx]


def build_model():
    inp = keras.Input(shape=(N_SAMPLES, N_COMPONENTS))
    x = keras.layers.Conv1D(32, 9, strides=4, padding="same", activation="relu")(inp)
    for filters, width in ((64, 7), (64, 5), (128, 5)):
        x = keras.layers.MaxPooling1D(2)(x)
        x = keras.layers.Conv1D(filters, width, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(N_CLASSES)(x))


def train(stream):
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

    times = []
    for step in range(STEPS):
        x, y = next(stream)
        loss = float(train_step(tf.constant(x), tf.constant(y)))
        times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:3d} loss {loss:.4f}")
    return float(np.mean(np.diff(times[4:])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(9)
    root = tempfile.mkdtemp(prefix="u18_input_memmap_seismic_")
    try:
        wave_path, label_path = write_archive(root, rng)
        waves = np.load(wave_path, mmap_mode="r")
        labels = np.load(label_path)
        print(f"archive {waves.shape} ({waves.nbytes / 2**20:.0f} MiB on disk)")

        sec = train(batch_stream(waves, labels, rng))
        print(f"real input: {sec * 1000:.1f} ms/step")
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
        if args.truth:
            fixed = next(batch_stream(waves, labels, rng))

            def repeat_fixed():
                while True:
                    yield fixed

            csec = train(repeat_fixed())
            frac = min(1.0, max(0.0, (sec - csec) / sec))
            print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
