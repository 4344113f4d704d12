"""Taxi fare regression from daily trip-log CSV exports (wide & deep model, custom loop)."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--files", type=int, default=6)
parser.add_argument("--rows-per-file", type=int, default=12000)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

LAT_BOUNDS = np.linspace(40.55, 40.95, 21).tolist()
LON_BOUNDS = np.linspace(-74.10, -73.70, 21).tolist()
DIST_BOUNDS = [0.5, 1, 2, 3, 5, 8, 12, 20, 30]
CROSS_BUCKETS = 5000


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def write_trip_logs(folder):
    rng = np.random.default_rng(3)
    paths = []
    for day in range(args.files):
        n = args.rows_per_file
        df = pd.DataFrame(
            {
                "pickup_hour": rng.integers(0, 24, n),
                "day_of_week": rng.integers(0, 7, n),
                "pickup_lat": rng.uniform(40.55, 40.95, n).round(5),
                "pickup_lon": rng.uniform(-74.10, -73.70, n).round(5),
                "dropoff_lat": rng.uniform(40.55, 40.95, n).round(5),
                "dropoff_lon": rng.uniform(-74.10, -73.70, n).round(5),
                "passengers": rng.integers(1, 6, n),
                "vendor": rng.choice(["CMT", "VTS", "DDS"], n),
                "payment": rng.choice(["card", "cash", "dispute", "no_charge"], n),
            }
        )
        dist = np.hypot(df.pickup_lat - df.dropoff_lat, df.pickup_lon - df.dropoff_lon) * 85
        df["trip_km"] = dist.round(3)
        df["fare"] = (2.5 + 1.6 * dist + rng.normal(0, 1.5, n)).round(2)
        path = os.path.join(folder, f"trips_day{day:02d}.csv")
        df.to_csv(path, index=False)
        paths.append(path)
    return paths


def engineer(features, fare):
    hour = tf.cast(features["pickup_hour"], tf.int64)
    dow = tf.cast(features["day_of_week"], tf.int64)
    plat = tf.raw_ops.Bucketize(input=features["pickup_lat"], boundaries=LAT_BOUNDS)
    plon = tf.raw_ops.Bucketize(input=features["pickup_lon"], boundaries=LON_BOUNDS)
    dlat = tf.raw_ops.Bucketize(input=features["dropoff_lat"], boundaries=LAT_BOUNDS)
    dlon = tf.raw_ops.Bucketize(input=features["dropoff_lon"], boundaries=LON_BOUNDS)
    dist_b = tf.raw_ops.Bucketize(input=features["trip_km"], boundaries=DIST_BOUNDS)
    s = tf.strings.as_string
    pickup_cell = tf.strings.join([s(plat), s(plon)], separator="_")
    dropoff_cell = tf.strings.join([s(dlat), s(dlon)], separator="_")
    route = tf.strings.join([pickup_cell, dropoff_cell], separator="->")
    hour_dow = tf.strings.join([s(hour), s(dow)], separator="@")
    route_time = tf.strings.join([route, hour_dow, features["vendor"]], separator="|")
    crosses = tf.stack(
        [
            tf.strings.to_hash_bucket_fast(pickup_cell, CROSS_BUCKETS),
            tf.strings.to_hash_bucket_fast(dropoff_cell, CROSS_BUCKETS),
            tf.strings.to_hash_bucket_fast(route, CROSS_BUCKETS),
            tf.strings.to_hash_bucket_fast(hour_dow, CROSS_BUCKETS),
            tf.strings.to_hash_bucket_fast(route_time, CROSS_BUCKETS),
            tf.strings.to_hash_bucket_fast(features["payment"], CROSS_BUCKETS),
        ],
        axis=1,
    )
    dense = tf.stack(
        [
            tf.cast(features["trip_km"], tf.float32) / 30.0,
            tf.cast(features["passengers"], tf.float32) / 6.0,
            tf.sin(tf.cast(hour, tf.float32) * 2 * np.pi / 24),
            tf.cos(tf.cast(hour, tf.float32) * 2 * np.pi / 24),
            tf.cast(dist_b, tf.float32) / 10.0,
        ],
        axis=1,
    )
    return (crosses, dense), tf.cast(fare, tf.float32)


def build_model():
    crosses = keras.Input((6,), dtype="int64")
    dense = keras.Input((5,))
    emb = layers.Embedding(CROSS_BUCKETS, 32)(crosses)
    x = layers.Concatenate()([layers.Flatten()(emb), dense])
    x = layers.Dense(384, activation="relu")(x)
    x = layers.Dense(384, activation="relu")(x)
    x = layers.Dense(192, activation="relu")(x)
    out = layers.Dense(1)(x)
    return keras.Model([crosses, dense], out)


def train(batches_fn, steps):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(inputs, target):
        with tf.GradientTape() as tape:
            pred = tf.squeeze(model(inputs, training=True), -1)
            loss = loss_fn(target, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    durations = []
    for epoch in range(args.epochs):
        last = time.perf_counter()
        total, n = 0.0, 0
        for inputs, target in batches_fn(steps):
            loss = float(train_step(inputs, target))
            now = time.perf_counter()
            durations.append(now - last)
            last = now
            total += loss
            n += 1
        print(f"epoch {epoch + 1}: huber {total / max(n, 1):.3f} ({n} steps)")
    return float(np.mean(durations[5:]))


workdir = tempfile.mkdtemp(prefix="u21_input_csv_taxi_")
try:
    files = write_trip_logs(workdir)
    train_ds = tf.data.experimental.make_csv_dataset(
        files,
        batch_size=args.batch_size,
        label_name="fare",
        num_epochs=1,
        shuffle=True,
        shuffle_buffer_size=4096,
        num_parallel_reads=1,
    ).map(engineer)
    steps_per_epoch = args.files * args.rows_per_file // args.batch_size

    full = train(lambda steps: train_ds.take(steps), steps_per_epoch)
    print(f"csv pipeline: {full * 1000:.1f} ms/step")
    report("steps_per_second", 1.0 / full)

    if args.truth:
        fixed_inputs, fixed_target = next(iter(train_ds))
        compute = train(
            lambda steps: ((fixed_inputs, fixed_target) for _ in range(steps)), steps_per_epoch
        )
        frac = min(1.0, max(0.0, (full - compute) / full))
        report("truth_input_fraction", frac)
        print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")
    print(f"done: {args.epochs} epochs x ~{steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
