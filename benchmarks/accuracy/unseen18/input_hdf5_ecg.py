"""Arrhythmia detection on multi-lead ECG windows stored in an HDF5 archive."""

import argparse
import json
import os
import shutil
import tempfile
import time

import h5py
import numpy as np
import scipy.signal
import tensorflow as tf
import keras

N_RECORDS = 3000
N_LEADS = 8
WINDOW = 2048
FS = 500
N_CLASSES = 5
BATCH_SIZE = 64
STEPS = 100
VAL_STEPS = 4


def write_archive(path, rng):
    t = np.arange(WINDOW) / FS
    with h5py.File(path, "w") as f:
        sig = f.create_dataset("signals", (N_RECORDS, WINDOW, N_LEADS), dtype="float32")
        lab = f.create_dataset("labels", (N_RECORDS,), dtype="int64")
        labels = rng.integers(0, N_CLASSES, N_RECORDS)
        lab[:] = labels
        for start in range(0, N_RECORDS, 500):
            n = min(500, N_RECORDS - start)
            hr = 1.0 + 0.25 * labels[start : start + n, None, None]
            beats = np.sin(2 * np.pi * hr * t[None, :, None]) ** 15
            drift = 0.3 * np.sin(2 * np.pi * 0.3 * t)[None, :, None]
            noise = 0.1 * rng.standard_normal((n, WINDOW, N_LEADS))
            sig[start : start + n] = (beats + drift + noise).astype(np.float32)


SOS = scipy.signal.butter(4, [0.5, 40.0], btype="bandpass", fs=FS, output="sos")


def record_generator(path, indices, seed):
    rng = np.random.default_rng(seed)
    with h5py.File(path, "r") as f:
        signals, labels = f["signals"], f["labels"]
        while True:
            i = int(rng.choice(indices))
            x = signals[i]
            y = labels[i]
            x = scipy.signal.sosfiltfilt(SOS, x, axis=0)
            x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
            yield x.astype(np.float32), np.int64(y)


def make_dataset(path, indices, seed):
    spec = (
        tf.TensorSpec((WINDOW, N_LEADS), tf.float32),
        tf.TensorSpec((), tf.int64),
    )
    ds = tf.data.Dataset.from_generator(
        lambda: record_generator(path, indices, seed), output_signature=spec
    )
    return ds.batch(BATCH_SIZE)


def build_model():
    inp = keras.Input(shape=(WINDOW, N_LEADS))
    x = keras.layers.Conv1D(16, 7, strides=2, padding="same", activation="relu")(inp)
    for filters in (48, 64, 96):
        x = keras.layers.MaxPooling1D(2)(x)
        x = keras.layers.Conv1D(filters, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._last is None:
            self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(train_ds, val_ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(
        train_ds,
        steps_per_epoch=STEPS // 2,
        epochs=2,
        validation_data=val_ds,
        validation_steps=VAL_STEPS,
        callbacks=[timer],
        verbose=2,
    )
    return timer.seconds_per_step(), hist.history["val_accuracy"][-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(3)
    root = tempfile.mkdtemp(prefix="u18_input_hdf5_ecg_")
    try:
        path = os.path.join(root, "ecg_windows.h5")
        write_archive(path, rng)
        perm = rng.permutation(N_RECORDS)
        train_idx, val_idx = perm[: int(0.85 * N_RECORDS)], perm[int(0.85 * N_RECORDS) :]
        train_ds = make_dataset(path, train_idx, 11)
        val_ds = make_dataset(path, val_idx, 12)

        sec, val_acc = train(train_ds, val_ds)
        print(f"real input: {sec * 1000:.1f} ms/step, val_accuracy {val_acc:.3f}")
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
        if args.truth:
            batch = next(iter(train_ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            csec, _ = train(cached, val_ds)
            frac = min(1.0, max(0.0, (sec - csec) / sec))
            print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
