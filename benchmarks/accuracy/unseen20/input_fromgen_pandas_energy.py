"""Next-day load forecasting for smart meters with rolling-window features."""

import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

N_METERS = 400
HOURS = 24 * 120
LOOKBACK = 168
HORIZON = 24
N_FEATS = 10
BATCH_SIZE = 64
STEPS = 100

rng = np.random.default_rng(5)
hours = np.arange(HOURS)
BASE = (
    1.0
    + 0.5 * np.sin(2 * np.pi * hours / 24)[None, :]
    + 0.2 * np.sin(2 * np.pi * hours / (24 * 7))[None, :]
)
LOADS = (
    BASE * rng.uniform(0.5, 2.0, (N_METERS, 1)) + 0.1 * rng.standard_normal((N_METERS, HOURS))
).astype("float32")
TEMPS = (15 + 8 * np.sin(2 * np.pi * hours / (24 * 365)) + rng.standard_normal(HOURS)).astype(
    "float32"
)


def window_generator(seed):
    r = np.random.default_rng(seed)
    while True:
        meter = int(r.integers(N_METERS))
        start = int(r.integers(24 * 14, HOURS - LOOKBACK - HORIZON))
        lo = start - 24 * 7
        frame = pd.DataFrame(
            {"load": LOADS[meter, lo : start + LOOKBACK], "temp": TEMPS[lo : start + LOOKBACK]},
            index=pd.date_range("2024-01-01", periods=start + LOOKBACK - lo, freq="h"),
        )
        frame["load_mean_6h"] = frame["load"].rolling(6).mean()
        frame["load_mean_24h"] = frame["load"].rolling(24).mean()
        frame["load_std_24h"] = frame["load"].rolling(24).std()
        frame["load_max_24h"] = frame["load"].rolling(24).max()
        frame["load_lag_24h"] = frame["load"].shift(24)
        frame["load_lag_168h"] = frame["load"].shift(168)
        frame["temp_mean_24h"] = frame["temp"].rolling(24).mean()
        frame["hour"] = frame.index.hour / 23.0
        frame = frame.iloc[-LOOKBACK:]
        x = frame.to_numpy(dtype="float32")
        y = LOADS[meter, start + LOOKBACK : start + LOOKBACK + HORIZON]
        yield x, y


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        lambda: window_generator(1),
        output_signature=(
            tf.TensorSpec((LOOKBACK, N_FEATS), tf.float32),
            tf.TensorSpec((HORIZON,), tf.float32),
        ),
    )
    return ds.batch(BATCH_SIZE)


class Forecaster(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = keras.layers.Conv1D(128, 7, padding="causal", activation="relu")
        self.conv2 = keras.layers.Conv1D(
            128, 5, padding="causal", dilation_rate=2, activation="relu"
        )
        self.conv3 = keras.layers.Conv1D(
            128, 5, padding="causal", dilation_rate=4, activation="relu"
        )
        self.pool = keras.layers.GlobalAveragePooling1D()
        self.dense = keras.layers.Dense(256, activation="relu")
        self.head = keras.layers.Dense(HORIZON)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x, training=False):
        h = self.conv3(self.conv2(self.conv1(x)))
        return self.head(self.dense(self.pool(h)))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.abs(pred - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


def build_model():
    model = Forecaster()
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
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

    train_ds = make_dataset()
    model = build_model()
    timer = StepTimer()
    model.fit(train_ds, epochs=1, steps_per_epoch=STEPS, callbacks=[timer], verbose=2)
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(cached, epochs=1, steps_per_epoch=STEPS, callbacks=[timer2], verbose=2)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_out({"truth_input_fraction": frac})
        summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
