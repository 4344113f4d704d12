"""Freeway traffic-flow forecasting (next 12 five-minute readings) from loop-detector windows.

Validation runs on the full held-out month after every epoch.
Usage: python eval_fullval_trafficflow.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf
from keras import layers

N_SENSORS = 16
WINDOW = 96
HORIZON = 12
N_TRAIN = 8192
N_VAL = 36000
BATCH_SIZE = 64
VAL_BATCH_SIZE = 256
EPOCHS = 3
STEPS_PER_EPOCH = 70
SEED = 13


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


class ValidationClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.spent = 0.0
        self.first_step_end = None
        self.fit_end = None

    def on_train_batch_end(self, batch, logs=None):
        if self.first_step_end is None:
            self.first_step_end = time.perf_counter()

    def on_test_begin(self, logs=None):
        self._t = time.perf_counter()

    def on_test_end(self, logs=None):
        self.spent += time.perf_counter() - self._t

    def on_train_end(self, logs=None):
        self.fit_end = time.perf_counter()


def make_windows(n, rng):
    t = rng.uniform(0, 2000, size=(n, 1)) + np.arange(WINDOW + HORIZON)[None, :]
    daily = np.sin(2 * np.pi * t / 288)[..., None]
    offsets = rng.uniform(0.5, 1.5, size=(1, 1, N_SENSORS))
    series = (
        0.6 + 0.3 * daily * offsets + rng.normal(0, 0.05, size=(n, WINDOW + HORIZON, N_SENSORS))
    )
    series = series.astype(np.float32)
    return series[:, :WINDOW], series[:, WINDOW:]


def build_model():
    inputs = keras.Input(shape=(WINDOW, N_SENSORS))
    x = layers.Conv1D(64, 5, padding="causal", activation="relu")(inputs)
    x = layers.Conv1D(64, 5, padding="causal", dilation_rate=2, activation="relu")(x)
    x = layers.Conv1D(64, 5, padding="causal", dilation_rate=4, activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(256, activation="relu")(x)
    x = layers.Dense(HORIZON * N_SENSORS)(x)
    outputs = layers.Reshape((HORIZON, N_SENSORS))(x)
    model = keras.Model(inputs, outputs, name="tcn_flow")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


def train(dataset, val):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    vclock = ValidationClock()
    model.fit(
        dataset,
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        validation_data=val,
        callbacks=[clock, vclock],
        verbose=2,
    )
    after_first = vclock.fit_end - vclock.first_step_end
    return clock.seconds_per_step(), vclock.spent, after_first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    x_train, y_train = make_windows(N_TRAIN, rng)
    x_val, y_val = make_windows(N_VAL, rng)
    print(f"train {x_train.shape}, validation {x_val.shape}")

    ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .shuffle(N_TRAIN, seed=SEED)
        .repeat()
        .batch(BATCH_SIZE, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(VAL_BATCH_SIZE)
    full, val_time, after_first = train(ds, val_ds)
    append_result({"steps_per_second": 1.0 / full})
    print(f"validation took {val_time:.1f}s of {after_first:.1f}s after the first step")

    if args.truth:
        batch = next(iter(ds))
        compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), val_ds)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}, validation share {val_time / after_first:.2f}"
        )
    else:
        print(f"summary: {full * 1000:.1f} ms/step, validation share {val_time / after_first:.2f}")


if __name__ == "__main__":
    main()
