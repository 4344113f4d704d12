"""Road traffic speed forecasting from loop-detector sequences with a stacked GRU."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SENSORS = 24
SEQ_LEN = 72
HORIZON = 12
N_SAMPLES = 6144
BATCH_SIZE = 64
EPOCHS = 2
STEPS_PER_EPOCH = 40


def make_data(rng):
    t = np.arange(SEQ_LEN + HORIZON)[None, :, None]
    phase = rng.uniform(0, 2 * np.pi, (N_SAMPLES, 1, N_SENSORS))
    speeds = (
        55
        + 15 * np.sin(2 * np.pi * t / 288 + phase)
        + 3 * rng.standard_normal((N_SAMPLES, SEQ_LEN + HORIZON, N_SENSORS))
    )
    speeds = ((speeds - 55) / 15).astype("float32")
    return speeds[:, :SEQ_LEN], speeds[:, SEQ_LEN:, 0]


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN, N_SENSORS))
    x = keras.layers.GRU(128, return_sequences=True)(inputs)
    x = keras.layers.GRU(128)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(HORIZON)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x_train, y_train = make_data(np.random.default_rng(0))
    print(f"training windows: {x_train.shape}, targets: {y_train.shape}")

    model = build_model()
    timer = StepTimer()
    model.fit(
        x_train,
        y_train,
        batch_size=BATCH_SIZE,
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        callbacks=[timer],
        verbose=2,
    )
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

    if args.truth:
        batch = (x_train[:BATCH_SIZE], y_train[:BATCH_SIZE])
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(
            cached, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer2], verbose=2
        )
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_out({"truth_input_fraction": frac})
        summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
