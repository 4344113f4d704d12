"""Day-ahead building energy load forecasting with a stacked GRU.

Hourly meter readings plus weather covariates, windowed into 4-day histories.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_WINDOWS = 2560
HISTORY = 96  # hours
N_COVARIATES = 12
HORIZON = 24
UNITS = 128
BATCH = 64
EPOCHS = 3
LR = 1e-3


def make_windows(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(HISTORY + HORIZON)
    daily = np.sin(2 * np.pi * t / 24)[None, :]
    scale = rng.uniform(0.5, 2.0, size=(N_WINDOWS, 1))
    load = scale * daily + rng.normal(scale=0.2, size=(N_WINDOWS, HISTORY + HORIZON))
    cov = rng.normal(size=(N_WINDOWS, HISTORY, N_COVARIATES - 1))
    x = np.concatenate([load[:, :HISTORY, None], cov], axis=-1).astype(np.float32)
    y = load[:, HISTORY:].astype(np.float32)
    return x, y


def build_model():
    model = keras.Sequential(
        [
            keras.Input((HISTORY, N_COVARIATES)),
            keras.layers.GRU(UNITS, return_sequences=True),
            keras.layers.GRU(UNITS),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(HORIZON),
        ]
    )
    model.compile(optimizer=keras.optimizers.Adam(LR), loss="mse", metrics=["mae"])
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
    parser.add_argument("--windows", type=int, default=N_WINDOWS)
    args = parser.parse_args()

    x, y = make_windows()
    x, y = x[: args.windows], y[: args.windows]
    steps = len(x) // BATCH

    model = build_model()
    timer = StepTimer()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer], verbose=2)
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"energy load GRU: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

    if args.truth:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2], verbose=2)
        compute = timer2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
