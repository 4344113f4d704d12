"""Substation load forecasting from a long multichannel SCADA series.

The whole series (one reading per minute, several feeders plus temperature)
is sliced with Dataset.from_tensor_slices(series).window(...).flat_map(...),
the classic tf.data sliding-window recipe, then shuffled, batched and fed to
model.fit to predict the next hour of total load.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_MINUTES = 200000
N_FEEDS = 12
WIN = 180
HORIZON = 60
BATCH = 64
STEPS_PER_EPOCH = 120
EPOCHS = 3


def make_series(rng):
    t = np.arange(N_MINUTES, dtype=np.float32)
    daily = np.sin(2 * np.pi * t / 1440.0)
    weekly = np.sin(2 * np.pi * t / (1440.0 * 7))
    feeds = (daily[:, None] * rng.uniform(0.5, 1.5, N_FEEDS) + 0.3 * weekly[:, None]
             + 0.1 * rng.normal(size=(N_MINUTES, N_FEEDS)))
    temp = 0.8 * np.sin(2 * np.pi * (t - 200) / 1440.0) + 0.05 * rng.normal(size=N_MINUTES)
    return np.concatenate([feeds, temp[:, None]], axis=1).astype(np.float32)


def split(window):
    x = window[:WIN]
    y = tf.reduce_sum(window[WIN:, :N_FEEDS], axis=1)
    return x, y


def make_dataset(series):
    ds = tf.data.Dataset.from_tensor_slices(series)
    ds = ds.window(WIN + HORIZON, shift=7, drop_remainder=True)
    ds = ds.flat_map(lambda w: w.batch(WIN + HORIZON, drop_remainder=True))
    ds = ds.map(split)
    return ds.shuffle(500, seed=0).batch(BATCH).repeat()


def build_model():
    inp = keras.Input((WIN, N_FEEDS + 1))
    x = keras.layers.Conv1D(32, 7, strides=3, activation="relu")(inp)
    x = keras.layers.Conv1D(48, 5, strides=2, activation="relu")(x)
    x = keras.layers.GRU(32)(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(HORIZON)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
                     callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    series = make_series(np.random.default_rng(0))
    full, loss = train(make_dataset(series))
    emit({"steps_per_second": 1.0 / full})
    msg = f"powergrid: {EPOCHS}x{STEPS_PER_EPOCH} steps, {full * 1000:.1f} ms/step, loss {loss:.4f}"
    if args.truth:
        batch = next(iter(make_dataset(series)))
        compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
