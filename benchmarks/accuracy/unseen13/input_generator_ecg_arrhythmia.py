"""Arrhythmia classifier on 12-lead ECG windows streamed from a Python generator."""

import argparse
import json
import os
import time

import numpy as np
from scipy import signal

import keras
import tensorflow as tf

SAMPLE_RATE = 250
WINDOW_SECONDS = 4
N_LEADS = 12
N_CLASSES = 5
BATCH_SIZE = 16
STEPS_PER_EPOCH = 40
EPOCHS = 2
STEPS_PER_EXECUTION = 4
SEED = 7


class StepClock(keras.callbacks.Callback):
    """Wall time per training step, ignoring the first few steps and epoch boundaries."""

    def __init__(self, skip=5):
        super().__init__()
        self.skip = skip
        self.offset = 0
        self.prev = None
        self.total = 0.0
        self.count = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.prev = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        done = self.offset + batch + 1
        if self.prev is not None and self.prev[0] >= self.skip:
            self.total += now - self.prev[1]
            self.count += done - self.prev[0]
        self.prev = (done, now)

    def on_epoch_end(self, epoch, logs=None):
        if self.prev is not None:
            self.offset = self.prev[0]

    def seconds_per_step(self):
        return self.total / max(self.count, 1)


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


# ---------------------------------------------------------------- data
BANDPASS = signal.butter(4, [0.5, 40.0], btype="bandpass", fs=SAMPLE_RATE, output="sos")
NOTCH_B, NOTCH_A = signal.iirnotch(50.0, 30.0, fs=SAMPLE_RATE)


def synth_record(rng, label):
    n = SAMPLE_RATE * WINDOW_SECONDS
    t = np.arange(n) / SAMPLE_RATE
    rate = {0: 70, 1: 110, 2: 50, 3: 85, 4: 95}[label] + rng.normal(0, 5)
    beats = np.cumsum(rng.normal(60.0 / rate, 0.02 + 0.08 * (label == 3), size=8))
    leads = np.empty((N_LEADS, n))
    for lead in range(N_LEADS):
        gain = rng.uniform(0.5, 1.5)
        x = 0.15 * np.sin(2 * np.pi * rng.uniform(0.1, 0.4) * t)
        for b in beats:
            x += gain * np.exp(-(((t - b) / 0.012) ** 2))
            x += 0.25 * gain * np.exp(-(((t - b - 0.25) / 0.04) ** 2))
            if label == 4:
                x -= 0.3 * gain * np.exp(-(((t - b - 0.05) / 0.02) ** 2))
        x += 0.1 * np.sin(2 * np.pi * 50.0 * t) + rng.normal(0, 0.05, n)
        x = signal.filtfilt(NOTCH_B, NOTCH_A, x)
        x = signal.sosfiltfilt(BANDPASS, x)
        leads[lead] = (x - x.mean()) / (x.std() + 1e-6)
    return leads.T.astype("float32")


def ecg_batches(batch_size, seed):
    rng = np.random.default_rng(seed)
    while True:
        labels = rng.integers(0, N_CLASSES, size=batch_size)
        x = np.stack([synth_record(rng, int(y)) for y in labels])
        yield x, labels.astype("int32")


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(SAMPLE_RATE * WINDOW_SECONDS, N_LEADS))
    x = inputs
    for filters in (32, 48, 64, 96):
        x = keras.layers.Conv1D(filters, 9, padding="same", activation="relu")(x)
        x = keras.layers.Conv1D(filters, 9, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="ecg_cnn")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    return model


def train(data):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    sec = train(ecg_batches(BATCH_SIZE, SEED))
    append_result(steps_per_second=1.0 / sec)
    summary = f"ecg: {sec * 1000:.1f} ms/step ({1.0 / sec:.2f} steps/s)"

    if args.truth:
        x, y = next(ecg_batches(BATCH_SIZE, SEED + 1))
        cached = tf.data.Dataset.from_tensors((x, y)).repeat()
        compute = train(cached)
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
