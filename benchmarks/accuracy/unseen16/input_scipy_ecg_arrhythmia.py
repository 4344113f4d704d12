"""Arrhythmia detection from single-lead ECG strips (normal vs. AF vs. other)."""

import argparse
import json
import os
import time

import numpy as np
import keras
import tensorflow as tf
from scipy import signal

FS_RAW = 1000
FS_MODEL = 250
STRIP_SECONDS = 10
BATCH_SIZE = 32
STEPS = 60
N_CLASSES = 3
CLASS_WEIGHT = {0: 0.5, 1: 3.0, 2: 1.5}
CLASS_PROBS = [0.7, 0.1, 0.2]

B_BAND, A_BAND = signal.butter(4, [0.5, 40.0], btype="bandpass", fs=FS_RAW)
B_NOTCH, A_NOTCH = signal.iirnotch(50.0, 30.0, fs=FS_RAW)


def synth_strip(rng, label):
    n = FS_RAW * STRIP_SECONDS
    t = np.arange(n) / FS_RAW
    rr = 60.0 / rng.uniform(55, 95)
    beats, pos = [], rng.uniform(0, rr)
    while pos < STRIP_SECONDS:
        beats.append(pos)
        jitter = rng.normal(0, 0.18 * rr) if label == 1 else rng.normal(0, 0.02 * rr)
        pos += rr + jitter
    ecg = np.zeros(n)
    for b in beats:
        ecg += 1.2 * np.exp(-(((t - b) / 0.012) ** 2))
        if label != 1:
            ecg += 0.15 * np.exp(-(((t - b + 0.16) / 0.03) ** 2))
        ecg += 0.3 * np.exp(-(((t - b - 0.25) / (0.06 if label != 2 else 0.11)) ** 2))
    wander = 0.4 * np.sin(2 * np.pi * 0.2 * t + rng.uniform(0, 6))
    mains = 0.1 * np.sin(2 * np.pi * 50 * t)
    return ecg + wander + mains + rng.normal(0, 0.05, n)


def preprocess(raw):
    x = signal.filtfilt(B_BAND, A_BAND, raw)
    x = signal.filtfilt(B_NOTCH, A_NOTCH, x)
    x = signal.resample_poly(x, FS_MODEL, FS_RAW)
    x = signal.medfilt(x, 5)
    x = (x - np.median(x)) / (np.std(x) + 1e-6)
    return x.astype(np.float32)[:, None]


def strip_batches(seed):
    rng = np.random.default_rng(seed)
    while True:
        labels = rng.choice(N_CLASSES, size=BATCH_SIZE, p=CLASS_PROBS)
        xs = np.stack([preprocess(synth_strip(rng, int(y))) for y in labels])
        yield xs, labels.astype(np.int32)


def make_dataset(seed):
    return tf.data.Dataset.from_generator(
        lambda: strip_batches(seed),
        output_signature=(
            tf.TensorSpec((None, FS_MODEL * STRIP_SECONDS, 1), tf.float32),
            tf.TensorSpec((None,), tf.int32),
        ),
    )


def build_model():
    inp = keras.Input(shape=(FS_MODEL * STRIP_SECONDS, 1))
    x = inp
    for filters, k in ((24, 15), (32, 9), (48, 9), (64, 5), (96, 5)):
        x = keras.layers.Conv1D(filters, k, padding="same", use_bias=False)(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.Activation("relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        durations = [b - a for (e0, a), (e1, b) in zip(self.stamps, self.stamps[1:]) if e0 == e1]
        return float(np.mean(durations[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    model = build_model()
    timer = StepTimer()
    model.fit(
        make_dataset(seed=0),
        epochs=1,
        steps_per_epoch=STEPS,
        class_weight=CLASS_WEIGHT,
        callbacks=[timer],
        verbose=0,
    )
    full = timer.seconds_per_step()
    print(f"real input: {full * 1000:.1f} ms/step")
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(make_dataset(seed=1)))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(
            cached,
            epochs=1,
            steps_per_epoch=STEPS,
            class_weight=CLASS_WEIGHT,
            callbacks=[timer2],
            verbose=0,
        )
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
