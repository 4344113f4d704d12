"""Arrhythmia screening from single-lead ECG strips.

Raw strips are held in memory; each strip is band-pass filtered with SciPy
inside the tf.data pipeline before batching.
"""

import argparse
import json
import os
import time

import numpy as np
import scipy.signal
import tensorflow as tf
import keras

FS = 250  # Hz
STRIP = 2500  # 10 s strips
N_STRIPS = 3000
N_VAL = 96
N_CLASSES = 4
BATCH = 32
EPOCHS = 3
STEPS = 80
LR = 1e-3


def make_strips(n, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(STRIP) / FS
    labels = rng.integers(0, N_CLASSES, size=n).astype(np.int32)
    rate = 1.0 + 0.4 * labels + rng.normal(scale=0.05, size=n)
    beats = np.sin(2 * np.pi * rate[:, None] * t[None, :]) ** 15
    wander = 0.8 * np.sin(2 * np.pi * 0.2 * t[None, :] + rng.random((n, 1)) * 6)
    mains = 0.3 * np.sin(2 * np.pi * 50 * t[None, :])
    noise = rng.normal(scale=0.1, size=(n, STRIP))
    return (beats + wander + mains + noise).astype(np.float32), labels


def bandpass(strip):
    sos = scipy.signal.butter(4, [0.5, 40.0], btype="bandpass", fs=FS, output="sos")
    clean = scipy.signal.sosfiltfilt(sos, strip)
    b, a = scipy.signal.iirnotch(50.0, 30.0, fs=FS)
    clean = scipy.signal.filtfilt(b, a, clean)
    clean = (clean - clean.mean()) / (clean.std() + 1e-6)
    return clean.astype(np.float32)


def preprocess(strip, label):
    clean = tf.numpy_function(bandpass, [strip], tf.float32)
    clean = tf.reshape(clean, (STRIP, 1))
    return clean, label


def build_model():
    inp = keras.Input((STRIP, 1))
    x = inp
    for filters in (16, 32, 32, 48):
        x = keras.layers.Conv1D(filters, 7, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(3)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        gaps = np.concatenate([np.diff(s) for s in self.stamps if len(s) > 1])
        return float(np.mean(gaps[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x_train, y_train = make_strips(N_STRIPS, seed=0)
    x_val, y_val = make_strips(N_VAL, seed=1)
    val_clean = np.stack([bandpass(s) for s in x_val])[..., None]

    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .shuffle(N_STRIPS)
        .map(preprocess)
        .batch(BATCH)
        .prefetch(1)
        .repeat()
    )

    model = build_model()
    timer = StepTimer()
    model.fit(
        train_ds,
        steps_per_epoch=STEPS,
        epochs=EPOCHS,
        validation_data=(val_clean, y_val),
        callbacks=[timer],
        verbose=2,
    )
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"ecg screening: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

    if args.truth:
        batch = next(iter(train_ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(
            fixed,
            steps_per_epoch=STEPS,
            epochs=EPOCHS,
            validation_data=(val_clean, y_val),
            callbacks=[timer2],
            verbose=2,
        )
        compute = timer2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
