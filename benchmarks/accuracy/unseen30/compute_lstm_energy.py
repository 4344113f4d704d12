"""Building energy-use forecasting with a stacked LSTM.

Hourly smart-meter sequences (consumption, outdoor temperature, occupancy,
calendar features) are generated once and kept in memory; the tf.data
pipeline is from_tensor_slices -> shuffle -> batch -> prefetch, so the step
time is the recurrent math.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SEQ = 4096
SEQ_LEN = 96
N_FEAT = 16
BATCH = 64
STEPS_PER_EPOCH = 40
EPOCHS = 3


def make_data(rng):
    t = np.arange(SEQ_LEN)[None, :, None]
    phase = rng.uniform(0, 2 * np.pi, size=(N_SEQ, 1, 1))
    x = np.sin(2 * np.pi * t / 24 + phase) + 0.2 * rng.normal(size=(N_SEQ, SEQ_LEN, N_FEAT))
    y = x[:, -24:, 0].mean(axis=1, keepdims=True) + 0.1 * rng.normal(size=(N_SEQ, 1))
    return x.astype(np.float32), y.astype(np.float32)


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_SEQ, seed=0).repeat()
    return ds.batch(BATCH).prefetch(tf.data.AUTOTUNE)


def build_model():
    inp = keras.Input((SEQ_LEN, N_FEAT))
    x = keras.layers.LSTM(192, return_sequences=True)(inp)
    x = keras.layers.LSTM(192)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse")
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
    x, y = make_data(np.random.default_rng(0))
    full, loss = train(make_dataset(x, y))
    emit({"steps_per_second": 1.0 / full})
    msg = f"energy: {EPOCHS}x{STEPS_PER_EPOCH} steps, {full * 1000:.1f} ms/step, loss {loss:.4f}"
    if args.truth:
        batch = next(iter(make_dataset(x, y)))
        compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
