"""Basket value regression from a retail transactions CSV export."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_ROWS = 40000
BATCH_SIZE = 128
STEPS_PER_EPOCH = 90
EPOCHS = 5
HASH_BUCKETS = 2048
STORES = [f"store_{i:03d}" for i in range(120)]
WORDS = (
    "organic milk bread apple banana cereal coffee tea pasta rice beans cheese yogurt eggs "
    "chicken beef salmon tofu soap shampoo paper towel batteries chips soda juice water wine "
    "beer frozen pizza icecream cookies tomato onion garlic pepper spinach lettuce carrot"
).split()


def write_csv(path, rng):
    with open(path, "w") as f:
        f.write("txn_id,timestamp,store,items,loyalty_tier,discount,basket_value\n")
        for i in range(N_ROWS):
            n_items = int(rng.integers(2, 25))
            items = "|".join(rng.choice(WORDS, size=n_items))
            ts = f"2025-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}T{rng.integers(7, 23):02d}:{rng.integers(0, 60):02d}"
            tier = ["none", "silver", "gold", "platinum"][rng.integers(4)]
            disc = rng.uniform(0, 0.3)
            value = n_items * rng.uniform(2.0, 6.0) * (1 - disc)
            f.write(
                f"{i},{ts},{STORES[rng.integers(len(STORES))]},{items},{tier},{disc:.3f},{value:.2f}\n"
            )


def parse_line(line):
    fields = tf.io.decode_csv(line, record_defaults=[[0], [""], [""], [""], [""], [0.0], [0.0]])
    _, ts, store, items, tier, disc, value = fields
    date_parts = tf.strings.split(tf.strings.split(ts, "T")[0], "-")
    month = tf.strings.to_number(date_parts[1]) / 12.0
    day = tf.strings.to_number(date_parts[2]) / 31.0
    hour = tf.strings.to_number(tf.strings.substr(tf.strings.split(ts, "T")[1], 0, 2)) / 23.0
    items = tf.strings.lower(tf.strings.strip(items))
    items = tf.strings.regex_replace(items, r"[^a-z|]", "")
    item_tokens = tf.strings.split(items, "|")
    bigrams = tf.strings.ngrams(item_tokens, 2, separator="+")
    item_ids = tf.strings.to_hash_bucket_fast(item_tokens, HASH_BUCKETS)
    bigram_ids = tf.strings.to_hash_bucket_fast(bigrams, HASH_BUCKETS)
    all_ids = tf.cast(tf.concat([item_ids, bigram_ids], axis=0), tf.int32)
    bag = tf.math.bincount(all_ids, minlength=HASH_BUCKETS, maxlength=HASH_BUCKETS)
    bag = tf.math.log1p(tf.cast(bag, tf.float32))
    store_id = tf.strings.to_hash_bucket_fast(store, 256)
    store_onehot = tf.one_hot(store_id, 256)
    tier_onehot = tf.one_hot(
        tf.strings.to_hash_bucket_fast(tf.strings.lower(tf.strings.strip(tier)), 8), 8
    )
    n_items = tf.cast(tf.size(item_tokens), tf.float32) / 25.0
    dense = tf.stack([month, day, hour, disc, n_items])
    features = tf.concat([bag, store_onehot, tier_onehot, dense], axis=0)
    return features, tf.math.log1p(value)


def make_dataset(csv_path):
    ds = tf.data.TextLineDataset(csv_path).skip(1)
    ds = ds.map(parse_line)
    ds = ds.batch(BATCH_SIZE, drop_remainder=True)
    return ds.take(STEPS_PER_EPOCH)


def build_model():
    inputs = keras.Input(shape=(HASH_BUCKETS + 256 + 8 + 5,))
    x = keras.layers.Dense(256, activation="relu")(inputs)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    return keras.Model(inputs, outputs)


def train(model, dataset, epochs):
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_epoch(dataset):
        total = tf.constant(0.0)
        steps = tf.constant(0)
        for x, y in dataset:
            with tf.GradientTape() as tape:
                pred = model(x, training=True)
                loss = loss_fn(tf.expand_dims(y, -1), pred)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += loss
            steps += 1
        return total / tf.cast(steps, tf.float32), steps

    epoch_times = []
    for epoch in range(epochs):
        t0 = time.perf_counter()
        mean_loss, steps = train_epoch(dataset)
        mean_loss = float(mean_loss)
        dt = time.perf_counter() - t0
        epoch_times.append(dt / int(steps))
        print(f"epoch {epoch + 1}/{epochs}: loss {mean_loss:.4f}, {dt:.2f}s")
    return float(np.mean(epoch_times[1:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u20_input_tfepoch_csv_retail_")
    try:
        csv_path = os.path.join(workdir, "transactions.csv")
        write_csv(csv_path, np.random.default_rng(21))
        dataset = make_dataset(csv_path)

        full = train(build_model(), dataset, EPOCHS)
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

        if args.truth:
            batch = next(iter(dataset))
            cached = tf.data.Dataset.from_tensors(batch).repeat(STEPS_PER_EPOCH)
            compute = train(build_model(), cached, EPOCHS)
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_out({"truth_input_fraction": frac})
            summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
