"""Train a claim-severity classifier straight from CSV exports of the claims system."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--files", type=int, default=4)
parser.add_argument("--rows-per-file", type=int, default=3200)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

STATES = ["CA", "TX", "NY", "FL", "WA", "OR", "NV", "AZ", "IL", "OH", "GA", "NC"]
VEHICLES = ["sedan", "suv", "pickup", "van", "coupe", "motorcycle", "truck", "hatchback"]
WORDS = (
    "rear ended at light hail damage windshield cracked parked car scraped flood water "
    "engine theft stolen bumper dent side mirror broken deer collision highway tree fell "
    "garage door vandalism keyed paint fire smoke towing rental injury minor whiplash"
).split()
NUM_TOKENS = 16
VOCAB_BUCKETS = 4096


def write_claims(dirpath, n_files, rows, rng):
    paths = []
    for i in range(n_files):
        lines = []
        for r in range(rows):
            age = rng.integers(18, 85)
            premium = rng.gamma(2.0, 600.0)
            amount = rng.lognormal(7.5, 1.1)
            state = STATES[rng.integers(len(STATES))]
            vehicle = VEHICLES[rng.integers(len(VEHICLES))]
            date = f"20{rng.integers(15, 25)}-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}"
            desc = " ".join(rng.choice(WORDS, size=rng.integers(4, 20))).upper() + "!!"
            label = int(amount > 4000 or "injury" in desc.lower())
            lines.append(
                f"C{i:02d}{r:06d},{age},{premium:.2f},{amount:.2f}, {state} ,{vehicle},"
                f"{date},{desc},{label}"
            )
        path = os.path.join(dirpath, f"claims_{i:02d}.csv")
        with open(path, "w") as f:
            f.write("claim_id,age,premium,amount,state,vehicle,date,description,label\n")
            f.write("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def parse_claim(line):
    fields = tf.strings.split(line, ",")
    age = tf.strings.to_number(fields[1])
    premium = tf.strings.to_number(fields[2])
    amount = tf.strings.to_number(fields[3])
    state = tf.strings.lower(tf.strings.strip(fields[4]))
    state_id = tf.strings.to_hash_bucket_fast(state, 64)
    vehicle_id = tf.strings.to_hash_bucket_fast(tf.strings.lower(fields[5]), 32)
    date_parts = tf.strings.to_number(tf.strings.split(fields[6], "-"))
    year, month, day = date_parts[0], date_parts[1], date_parts[2]
    desc = tf.strings.lower(fields[7])
    desc = tf.strings.regex_replace(desc, "[^a-z ]", "")
    desc = tf.strings.regex_replace(desc, " +", " ")
    words = tf.strings.split(tf.strings.strip(desc))
    bigrams = tf.strings.ngrams(words, 2)
    tokens = tf.concat([words, bigrams], axis=0)[:NUM_TOKENS]
    token_ids = tf.strings.to_hash_bucket_fast(tokens, VOCAB_BUCKETS - 1) + 1
    token_ids = tf.pad(token_ids, [[0, NUM_TOKENS - tf.shape(token_ids)[0]]])
    token_ids = tf.ensure_shape(token_ids, [NUM_TOKENS])
    numeric = tf.stack(
        [
            (age - 50.0) / 20.0,
            tf.math.log1p(premium) - 7.0,
            tf.math.log1p(amount) - 7.5,
            (year - 2020.0) / 5.0,
            tf.sin(2 * np.pi * month / 12.0),
            tf.cos(2 * np.pi * month / 12.0),
            day / 31.0,
            tf.cast(tf.size(words), tf.float32) / 20.0,
        ]
    )
    label = tf.strings.to_number(fields[8])
    features = {
        "numeric": numeric,
        "state": state_id,
        "vehicle": vehicle_id,
        "tokens": token_ids,
    }
    return features, label[None]


def make_dataset(paths, batch_size):
    ds = tf.data.TextLineDataset(paths).skip(0)
    ds = ds.filter(lambda line: tf.logical_not(tf.strings.regex_full_match(line, "claim_id.*")))
    ds = ds.map(parse_claim)
    ds = ds.batch(batch_size, drop_remainder=True)
    return ds.prefetch(2)


def build_model():
    numeric = keras.Input(shape=(8,), name="numeric")
    state = keras.Input(shape=(), dtype="int64", name="state")
    vehicle = keras.Input(shape=(), dtype="int64", name="vehicle")
    tokens = keras.Input(shape=(NUM_TOKENS,), dtype="int64", name="tokens")
    s = keras.layers.Embedding(64, 8)(state)
    v = keras.layers.Embedding(32, 8)(vehicle)
    t = keras.layers.Embedding(VOCAB_BUCKETS, 64)(tokens)
    t = keras.layers.GlobalAveragePooling1D()(t)
    x = keras.layers.Concatenate()([numeric, s, v, t])
    for units in (768, 512, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model([numeric, state, vehicle, tokens], out)


def make_train_epoch(model, optimizer, loss_fn):
    @tf.function
    def train_epoch(dataset):
        total = tf.constant(0.0)
        steps = tf.constant(0)
        for x, y in dataset:
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += loss
            steps += 1
        return total / tf.cast(steps, tf.float32), steps

    return train_epoch


def train(dataset, steps_per_epoch, label):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    train_epoch = make_train_epoch(model, optimizer, loss_fn)
    epoch_times = []
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        loss, steps = train_epoch(dataset)
        loss = float(loss)
        epoch_times.append(time.perf_counter() - t0)
        print(
            f"[{label}] epoch {epoch + 1}: loss={loss:.4f} steps={int(steps)} "
            f"time={epoch_times[-1]:.2f}s"
        )
    return float(np.mean(epoch_times[1:])) / steps_per_epoch


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


tmpdir = tempfile.mkdtemp(prefix="u25_input_textline_claims_")
try:
    rng = np.random.default_rng(7)
    paths = write_claims(tmpdir, args.files, args.rows_per_file, rng)
    steps_per_epoch = (args.files * args.rows_per_file) // args.batch_size
    dataset = make_dataset(paths, args.batch_size)

    full = train(dataset, steps_per_epoch, "csv")
    report("steps_per_second", 1.0 / full)
    summary = f"claims: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

    if args.truth:
        batch = next(iter(dataset))
        cached = tf.data.Dataset.from_tensors(batch).repeat(steps_per_epoch)
        compute = train(cached, steps_per_epoch, "cached")
        fraction = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", fraction)
        summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
    print(summary)
finally:
    shutil.rmtree(tmpdir, ignore_errors=True)
