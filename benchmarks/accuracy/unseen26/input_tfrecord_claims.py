"""Insurance claim fraud model trained from sharded TFRecord files."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_SHARDS = 16
RECORDS_PER_SHARD = 2000
N_NUMERIC = 24
N_CATEGORICAL = 12
N_TEXT_TOKENS = 16
HASH_BUCKETS = 5000
BATCH_SIZE = 256
STEPS_PER_EPOCH = 40
EPOCHS = 3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


NUMERIC = [f"num_{i}" for i in range(N_NUMERIC)]
CATEGORICAL = [f"cat_{i}" for i in range(N_CATEGORICAL)]


def write_shards(out_dir):
    rng = np.random.default_rng(0)
    paths = []
    for s in range(N_SHARDS):
        path = os.path.join(out_dir, f"claims-{s:05d}-of-{N_SHARDS:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(RECORDS_PER_SHARD):
                nums = rng.lognormal(3, 1, size=N_NUMERIC)
                cats = rng.integers(0, 300, size=N_CATEGORICAL)
                label = int(nums[0] > 40 and cats[0] % 3 == 0)
                feat = {
                    n: tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
                    for n, v in zip(NUMERIC, nums)
                }
                for n, v in zip(CATEGORICAL, cats):
                    feat[n] = tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[f"{n}_v{v}".encode()])
                    )
                words = rng.integers(0, 800, size=N_TEXT_TOKENS)
                feat["notes"] = tf.train.Feature(
                    bytes_list=tf.train.BytesList(value=[" ".join(f"w{w}" for w in words).encode()])
                )
                feat["label"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))
                ex = tf.train.Example(features=tf.train.Features(feature=feat))
                w.write(ex.SerializeToString())
        paths.append(path)
    return paths


FEATURE_SPEC = {n: tf.io.FixedLenFeature([], tf.float32) for n in NUMERIC}
FEATURE_SPEC.update({n: tf.io.FixedLenFeature([], tf.string) for n in CATEGORICAL})
FEATURE_SPEC["notes"] = tf.io.FixedLenFeature([], tf.string)
FEATURE_SPEC["label"] = tf.io.FixedLenFeature([], tf.int64)


def parse_claim(serialized):
    ex = tf.io.parse_single_example(serialized, FEATURE_SPEC)
    nums = []
    for n in NUMERIC:
        v = tf.math.log1p(tf.maximum(ex[n], 0.0))
        nums.append((v - 3.0) / 1.0)
    cats = []
    for n in CATEGORICAL:
        value = tf.strings.lower(tf.strings.strip(ex[n]))
        value = tf.strings.regex_replace(value, r"_v0*", "=")
        cats.append(tf.strings.to_hash_bucket_fast(value, HASH_BUCKETS))
    notes = tf.strings.regex_replace(tf.strings.lower(ex["notes"]), r"[^a-z0-9 ]", "")
    tokens = tf.strings.split(notes)
    tok_ids = tf.strings.to_hash_bucket_fast(tokens, HASH_BUCKETS)
    tok_ids = tf.pad(tok_ids, [[0, N_TEXT_TOKENS]])[:N_TEXT_TOKENS]
    features = {
        "numeric": tf.stack(nums),
        "categorical": tf.stack(cats),
        "notes": tok_ids,
    }
    return features, tf.cast(ex["label"], tf.float32)


def make_dataset(paths):
    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths))
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4)
    ds = ds.map(parse_claim)
    ds = ds.shuffle(20000).repeat().batch(BATCH_SIZE)
    return ds


# ---------------- model ----------------
def build_model():
    numeric = keras.Input((N_NUMERIC,), name="numeric")
    categorical = keras.Input((N_CATEGORICAL,), name="categorical", dtype="int64")
    notes = keras.Input((N_TEXT_TOKENS,), name="notes", dtype="int64")
    c = keras.layers.Embedding(HASH_BUCKETS, 32)(categorical)
    c = keras.layers.Flatten()(c)
    t = keras.layers.Embedding(HASH_BUCKETS, 32)(notes)
    t = keras.layers.GlobalAveragePooling1D()(t)
    x = keras.layers.Concatenate()([numeric, c, t])
    for units in (768, 768, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([numeric, categorical, notes], out)
    model.compile(keras.optimizers.Adam(1e-3), "binary_crossentropy", metrics=["AUC"])
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self):
        return (self.times[-1] - self.times[5]) / (len(self.times) - 6)


def train(ds, tag):
    model = build_model()
    timer = StepTimer()
    print(f"[{tag}] training")
    model.fit(ds, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


tmp_dir = tempfile.mkdtemp(prefix="u26_input_tfrecord_claims_")
try:
    shard_paths = write_shards(tmp_dir)
    dataset = make_dataset(shard_paths)
    full = train(dataset, "claims")
    write_out({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(dataset))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached, "cached")
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
    else:
        print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
finally:
    shutil.rmtree(tmp_dir, ignore_errors=True)
