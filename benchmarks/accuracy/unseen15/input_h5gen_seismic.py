"""Seismic event classifier (earthquake / quarry blast / noise) on 3-component waveforms.

Waveforms live in an HDF5 archive; batches are drawn at random by a Python generator.
Usage: python input_h5gen_seismic.py [--truth]
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import h5py
import numpy as np

import keras
import tensorflow as tf
from keras import layers

N_TRACES = 5000
N_SAMPLES = 3000
N_CHANNELS = 3
N_CLASSES = 3
BATCH_SIZE = 64
STEPS = 180
SEED = 11


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def write_archive(path, rng):
    t = np.arange(N_SAMPLES) / 100.0
    with h5py.File(path, "w") as f:
        wav = f.create_dataset(
            "waveforms",
            shape=(N_TRACES, N_SAMPLES, N_CHANNELS),
            dtype="float32",
            chunks=(1, N_SAMPLES, N_CHANNELS),
        )
        labels = rng.integers(0, N_CLASSES, size=N_TRACES)
        block = 500
        for start in range(0, N_TRACES, block):
            n = min(block, N_TRACES - start)
            x = rng.normal(0, 1, size=(n, N_SAMPLES, N_CHANNELS)).astype("float32")
            onset = rng.uniform(5, 20, size=(n, 1))
            freq = 2.0 + 3.0 * labels[start : start + n, None]
            env = np.exp(-np.clip(t[None, :] - onset, 0, None) / 3.0) * (t[None, :] > onset)
            x += (4.0 * env * np.sin(2 * np.pi * freq * t[None, :]))[..., None].astype("float32")
            wav[start : start + n] = x * rng.uniform(50, 5000, size=(n, 1, 1))
        f.create_dataset("labels", data=labels)


def batch_generator(path, batch_size, rng):
    with h5py.File(path, "r") as f:
        wav = f["waveforms"]
        labels = f["labels"][:]
        while True:
            idx = np.sort(rng.choice(N_TRACES, size=batch_size, replace=False))
            x = np.empty((batch_size, N_SAMPLES, N_CHANNELS), dtype="float32")
            for j, i in enumerate(idx):
                trace = wav[i]
                trace = trace - trace.mean(axis=0, keepdims=True)
                taper = np.hanning(N_SAMPLES)[:, None]
                trace = trace * taper
                trace = trace / (np.abs(trace).max(axis=0, keepdims=True) + 1e-6)
                x[j] = trace
            y = labels[idx]
            yield x, y


def build_model():
    inputs = keras.Input(shape=(N_SAMPLES, N_CHANNELS))
    x = inputs
    for filters, k in ((16, 7), (32, 5), (64, 5), (64, 3)):
        x = layers.Conv1D(filters, k, padding="same", activation="relu")(x)
        x = layers.MaxPooling1D(4 if filters < 64 else 2)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(64, activation="relu")(x)
    outputs = layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="phasenet_lite")
    model.compile(
        optimizer=keras.optimizers.Adam(5e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(data):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(data, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    workdir = tempfile.mkdtemp(prefix="u15_input_h5gen_seismic_")
    try:
        path = os.path.join(workdir, "events.h5")
        t0 = time.perf_counter()
        write_archive(path, rng)
        print(
            f"archive {os.path.getsize(path) / 1e6:.0f} MB written in {time.perf_counter() - t0:.1f}s"
        )

        full = train(batch_generator(path, BATCH_SIZE, rng))
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            x, y = next(batch_generator(path, BATCH_SIZE, rng))
            cached = tf.data.Dataset.from_tensors((x, y)).repeat()
            compute = train(cached)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
