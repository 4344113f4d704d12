"""Click-through-rate model on sharded CSV impression logs with hashed feature crosses."""

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

N_SHARDS = 8
ROWS_PER_SHARD = 20000
BATCH_SIZE = 1024
STEPS = 80
CROSS_BUCKETS = 2000
CATEGORICAL = ["site", "app", "device_model", "country", "ad_slot", "creative", "hour_of_day"]
NUMERIC = [f"num_{i}" for i in range(24)]
CROSSES = [("site", "ad_slot"), ("app", "creative"), ("device_model", "country"), ("country", "hour_of_day")]


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def write_shards(root, rng):
    cardinality = {"site": 400, "app": 900, "device_model": 1500, "country": 60,
                   "ad_slot": 25, "creative": 3000, "hour_of_day": 24}
    for shard in range(N_SHARDS):
        n = ROWS_PER_SHARD
        cols = {c: [f"{c[:3]}_{v}" for v in rng.integers(0, k, n)] for c, k in cardinality.items()}
        for name in NUMERIC:
            cols[name] = np.round(rng.lognormal(0, 1, n), 4)
        cols["clicked"] = (rng.random(n) < 0.12).astype(int)
        pd.DataFrame(cols).to_csv(os.path.join(root, f"impressions-{shard:03d}.csv"), index=False)


def cross_features(features, label):
    out = {}
    for a, b in CROSSES:
        key = tf.strings.join([features[a], features[b]], separator="_x_")
        ids = tf.strings.to_hash_bucket_fast(key, CROSS_BUCKETS)
        out[f"{a}_x_{b}"] = tf.one_hot(ids, CROSS_BUCKETS)
    for c in CATEGORICAL:
        ids = tf.strings.to_hash_bucket_fast(features[c], 500)
        out[c] = tf.one_hot(ids, 500)
    out["numeric"] = tf.math.log1p(tf.stack([tf.cast(features[n], tf.float32) for n in NUMERIC], axis=1))
    return out, label


def build_model():
    inputs, parts = [], []
    for a, b in CROSSES:
        inp = keras.Input(shape=(CROSS_BUCKETS,), name=f"{a}_x_{b}")
        inputs.append(inp)
        parts.append(keras.layers.Dense(32, use_bias=False)(inp))
    for c in CATEGORICAL:
        inp = keras.Input(shape=(500,), name=c)
        inputs.append(inp)
        parts.append(keras.layers.Dense(16, use_bias=False)(inp))
    num = keras.Input(shape=(len(NUMERIC),), name="numeric")
    inputs.append(num)
    parts.append(keras.layers.BatchNormalization()(num))
    x = keras.layers.Concatenate()(parts)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid", name="ctr")(x)
    model = keras.Model(inputs, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
    return model


def train(dataset):
    model = build_model()
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=0)
    return float(np.mean(np.diff(clock.times)[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    tmp = tempfile.mkdtemp(prefix="u27_input_csv_adclicks_")
    try:
        write_shards(tmp, np.random.default_rng(0))
        ds = tf.data.experimental.make_csv_dataset(
            os.path.join(tmp, "impressions-*.csv"),
            batch_size=BATCH_SIZE,
            label_name="clicked",
            num_epochs=None,
            shuffle_buffer_size=4096,
        )
        ds = ds.map(cross_features)

        full = train(ds)
        append_result(steps_per_second=1.0 / full)
        msg = f"adclicks: {1.0 / full:.2f} steps/s over {STEPS} steps of {BATCH_SIZE}"

        if args.truth:
            batch = next(iter(ds))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result(truth_input_fraction=frac)
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
