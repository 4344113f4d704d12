import time; T0 = time.perf_counter()
"""Animal-care log triage from many tiny TFRecord shards.

Each handler's tablet uploads a shard after every feeding round, so the log
store holds hundreds of tiny TFRecord files with one to three records each:
animal id, species, ration weights, vet vitals and a free-text note.  The
training pipeline lists the shards, interleaves TFRecordDataset readers,
parses each record serially (including tokenising the note with tf.strings),
and model.fit predicts whether the animal needs a vet visit.
"""
import os
import sys
import json
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
EPOCHS = 5
STEPS_PER_EPOCH = 380
N_SHARDS = 600
N_VITALS = 24
VOCAB = 64
SPECIES = ["horse", "elephant", "camel", "dog", "goose", "pony", "llama", "parrot"]
WORDS = ["ate", "well", "limping", "coughing", "calm", "restless", "drank", "little",
         "groomed", "swollen", "left", "right", "hoof", "eye", "skin", "rash", "normal",
         "vomit", "sleepy", "alert", "trailer", "stress", "weight", "loss", "gain"]


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def write_shards(folder, seed):
    rng = np.random.default_rng(seed)
    n_records = 0
    for s in range(N_SHARDS):
        path = os.path.join(folder, f"care-{s:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(int(rng.integers(1, 4))):
                vitals = rng.normal(0, 1, N_VITALS).astype(np.float32)
                note_words = rng.choice(WORDS, size=int(rng.integers(8, 30)))
                note = " ".join(note_words)
                sick = float(vitals[:3].sum() > 1.5 or "limping" in note_words[:4])
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "species": tf.train.Feature(bytes_list=tf.train.BytesList(value=[rng.choice(SPECIES).encode()])),
                    "vitals": tf.train.Feature(float_list=tf.train.FloatList(value=vitals)),
                    "ration_kg": tf.train.Feature(float_list=tf.train.FloatList(value=rng.uniform(1, 80, 4))),
                    "note": tf.train.Feature(bytes_list=tf.train.BytesList(value=[note.encode()])),
                    "vet": tf.train.Feature(float_list=tf.train.FloatList(value=[sick])),
                }))
                w.write(ex.SerializeToString())
                n_records += 1
    return n_records


SPEC = {
    "species": tf.io.FixedLenFeature([], tf.string),
    "vitals": tf.io.FixedLenFeature([N_VITALS], tf.float32),
    "ration_kg": tf.io.FixedLenFeature([4], tf.float32),
    "note": tf.io.FixedLenFeature([], tf.string),
    "vet": tf.io.FixedLenFeature([1], tf.float32),
}


def parse(record):
    ex = tf.io.parse_single_example(record, SPEC)
    note = tf.strings.regex_replace(tf.strings.lower(ex["note"]), r"[^a-z ]", " ")
    words = tf.strings.split(note)
    bigrams = tf.strings.ngrams(words, 2, separator="_")
    ids = tf.concat([tf.strings.to_hash_bucket_fast(words, VOCAB),
                     tf.strings.to_hash_bucket_fast(bigrams, VOCAB)], axis=0)
    bag = tf.math.bincount(tf.cast(ids, tf.int32), minlength=VOCAB, maxlength=VOCAB, dtype=tf.float32)
    sp = tf.strings.to_hash_bucket_fast(ex["species"], 8)
    feats = tf.concat([ex["vitals"], tf.math.log1p(ex["ration_kg"]),
                       tf.one_hot(sp, 8), bag / 10.0], axis=0)
    return feats, ex["vet"]


def make_dataset(folder):
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.tfrecord"), shuffle=True, seed=1)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4, block_length=1)
    return ds.map(parse).repeat().batch(BATCH).prefetch(1)


def build_model():
    n_in = N_VITALS + 4 + 8 + VOCAB
    model = keras.Sequential([
        keras.Input(shape=(n_in,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(ds):
    timer = StepTimer()
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
              callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    folder = tempfile.mkdtemp(prefix="u100_input_shardscatter_menagrel_")
    try:
        n = write_shards(folder, 21)
        print(f"[menagrel] wrote {n} records in {N_SHARDS} shards "
              f"({time.perf_counter()-T0:.1f}s)")
        keras.utils.set_random_seed(21)
        full = train(make_dataset(folder))
        emit({"steps_per_second": 1.0 / full})
        print(f"[menagrel] tiny-shard interleave: {full*1000:.1f} ms/step, "
              f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
        if TRUTH:
            batch = next(iter(make_dataset(folder)))
            keras.utils.set_random_seed(21)
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            print(f"[menagrel] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
                  f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
