"""Next-hour household load forecasting from smart-meter CSV exports.

Usage: python input_csv_smartmeter.py [--truth]
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import pandas as pd

import keras
import tensorflow as tf
from keras import layers

N_FILES = 6
ROWS_PER_FILE = 12000
N_LAGS = 24
BATCH_SIZE = 256
STEPS = 160
LEARNING_RATE = 1e-3
SEED = 3


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def write_exports(folder, rng):
    paths = []
    for k in range(N_FILES):
        n = ROWS_PER_FILE
        ts = pd.date_range("2023-01-01", periods=n, freq="h") + pd.Timedelta(days=30 * k)
        hour = ts.hour.values
        base = 0.4 + 0.3 * np.sin(2 * np.pi * (hour - 7) / 24) + rng.gamma(2, 0.1, size=n)
        df = pd.DataFrame(
            {
                "meter_id": [f"MTR{k:02d}{i % 50:03d}" for i in range(n)],
                "timestamp": ts.strftime("%Y-%m-%d %H:%M:%S"),
                "temperature_c": np.round(
                    10 + 8 * np.sin(2 * np.pi * ts.day_of_year.values / 365) + rng.normal(0, 2, n),
                    2,
                ),
                "tariff": rng.choice(["peak", "offpeak", "shoulder"], size=n),
            }
        )
        for lag in range(1, N_LAGS + 1):
            df[f"kwh_lag{lag}"] = np.round(np.roll(base, lag), 4)
        df["kwh_next"] = np.round(base, 4)
        path = os.path.join(folder, f"export_{k:02d}.csv")
        df.to_csv(path, index=False)
        paths.append(path)
    return paths


TARIFFS = tf.constant(["peak", "offpeak", "shoulder"])


def engineer(meter_id, timestamp, temperature, tariff, *rest):
    lags = tf.stack(rest[:N_LAGS])
    target = rest[N_LAGS]
    parts = tf.strings.split(timestamp, " ", maxsplit=1)
    date_part, time_part = parts[0], parts[1]
    ymd = tf.strings.to_number(tf.strings.split(date_part, "-"), tf.int32)
    hour = tf.strings.to_number(tf.strings.split(time_part, ":")[0], tf.float32)
    month = tf.cast(ymd[1], tf.float32)
    day = tf.cast(ymd[2], tf.float32)
    calendar = tf.stack(
        [
            tf.sin(2 * np.pi * hour / 24),
            tf.cos(2 * np.pi * hour / 24),
            tf.sin(2 * np.pi * month / 12),
            tf.cos(2 * np.pi * month / 12),
            day / 31.0,
        ]
    )
    log_lags = tf.math.log1p(lags)
    stats = tf.stack(
        [
            tf.reduce_mean(lags),
            tf.math.reduce_std(lags),
            tf.reduce_max(lags) - tf.reduce_min(lags),
            lags[0] - lags[23],
        ]
    )
    tariff_onehot = tf.cast(tf.equal(TARIFFS, tariff), tf.float32)
    meter_bucket = tf.one_hot(tf.strings.to_hash_bucket_fast(meter_id, 16), 16)
    temp = tf.reshape((temperature - 10.0) / 8.0, [1])
    features = tf.concat([log_lags, calendar, stats, tariff_onehot, meter_bucket, temp], axis=0)
    return features, tf.math.log1p(target)


def make_dataset(paths):
    defaults = [
        tf.constant("", tf.string),
        tf.constant("", tf.string),
        tf.constant(0.0),
        tf.constant("", tf.string),
    ]
    defaults += [tf.constant(0.0)] * (N_LAGS + 1)
    ds = tf.data.experimental.CsvDataset(paths, defaults, header=True)
    ds = ds.map(engineer)
    ds = ds.shuffle(4096, seed=SEED).batch(BATCH_SIZE, drop_remainder=True).repeat()
    return ds


def build_model(n_features):
    inputs = keras.Input(shape=(n_features,))
    x = inputs
    for units in (768, 768, 384):
        x = layers.Dense(units, activation="gelu")(x)
        x = layers.LayerNormalization()(x)
    outputs = layers.Dense(1)(x)
    return keras.Model(inputs, outputs, name="load_forecaster")


def train(dataset):
    keras.utils.set_random_seed(SEED)
    features_spec = dataset.element_spec[0]
    model = build_model(features_spec.shape[-1])
    optimizer = keras.optimizers.Adam(LEARNING_RATE)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = tf.squeeze(model(x, training=True), -1)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    marks = []
    for step, (x, y) in enumerate(dataset.take(STEPS)):
        loss = float(train_step(x, y))
        marks.append(time.perf_counter())
        if step % 40 == 0:
            print(f"step {step:4d}  huber {loss:.4f}")
    return (marks[-1] - marks[4]) / (len(marks) - 5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    folder = tempfile.mkdtemp(prefix="u15_input_csv_smartmeter_")
    try:
        t0 = time.perf_counter()
        paths = write_exports(folder, rng)
        print(f"wrote {len(paths)} exports in {time.perf_counter() - t0:.1f}s")

        dataset = make_dataset(paths)
        full = train(dataset)
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            batch = next(iter(dataset))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
