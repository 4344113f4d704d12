"""Seismic event classifier (quake / blast / noise) on three-component traces stored as .npy."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import scipy.signal
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--train-traces", type=int, default=4800)
parser.add_argument("--val-traces", type=int, default=480)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

TRACE_LEN = 1000
N_CLASSES = 3
TAPER = scipy.signal.windows.tukey(TRACE_LEN, 0.05)


def write_traces(folder, n, rng):
    os.makedirs(folder)
    t = np.arange(TRACE_LEN) / 100.0
    for i in range(n):
        label = int(rng.integers(N_CLASSES))
        onset = rng.uniform(2, 6)
        env = np.where(t > onset, np.exp(-(t - onset) * (0.4 + 0.6 * label)), 0.0)
        freq = [1.5, 6.0, 12.0][label]
        trace = env[:, None] * np.sin(2 * np.pi * freq * t)[:, None] * rng.uniform(0.5, 2, 3)
        trace += 0.3 * rng.standard_normal((TRACE_LEN, 3))
        np.save(os.path.join(folder, f"ev{i:06d}_c{label}.npy"), trace.astype(np.float32))


def load_trace(path):
    path = path.decode()
    trace = np.load(path)
    trace = scipy.signal.detrend(trace, axis=0)
    trace = trace * TAPER[:, None]
    trace = trace / (np.abs(trace).max() + 1e-6)
    label = np.int32(path[-5])
    return trace.astype(np.float32), label


def tf_load(path):
    trace, label = tf.numpy_function(load_trace, [path], (tf.float32, tf.int32))
    trace.set_shape((TRACE_LEN, 3))
    label.set_shape(())
    return trace, label


def make_dataset(folder, shuffle):
    ds = tf.data.Dataset.list_files(os.path.join(folder, "*.npy"), shuffle=shuffle, seed=0)
    ds = ds.map(tf_load)
    return ds.batch(args.batch_size, drop_remainder=True).prefetch(1)


def build_model():
    inputs = keras.Input((TRACE_LEN, 3))
    x = keras.layers.Conv1D(16, 7, strides=2, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def train(train_ds, val_ds, steps_per_epoch):
    model = build_model()
    timer = StepTimer()
    model.fit(
        train_ds,
        validation_data=val_ds,
        epochs=args.epochs,
        steps_per_epoch=steps_per_epoch,
        callbacks=[timer],
        verbose=2,
    )
    return timer.seconds_per_step()


tmpdir = tempfile.mkdtemp(prefix="u25_input_npy_seismic_")
try:
    rng = np.random.default_rng(17)
    write_traces(os.path.join(tmpdir, "train"), args.train_traces, rng)
    write_traces(os.path.join(tmpdir, "val"), args.val_traces, rng)
    train_ds = make_dataset(os.path.join(tmpdir, "train"), shuffle=True)
    val_ds = make_dataset(os.path.join(tmpdir, "val"), shuffle=False)
    steps_per_epoch = args.train_traces // args.batch_size

    full = train(train_ds, val_ds, steps_per_epoch)
    report("steps_per_second", 1.0 / full)
    summary = f"seismic: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached, val_ds, steps_per_epoch)
        fraction = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", fraction)
        summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
    print(summary)
finally:
    shutil.rmtree(tmpdir, ignore_errors=True)
