"""Customs declaration forms -> duty-band classifier.

Input path: every declaration form is written as its own tiny TFRecord file (one or
two records per file, hundreds of files) under a temp dir; tf.data lists the files,
reads them with TFRecordDataset and parses each record serially (parse_single_example,
string splitting, number parsing, hashing) before batching for model.fit.
Known bottleneck: opening many tiny files + per-record parsing (input-bound).
"""
import time; T0 = time.perf_counter()
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

N_FILES = 3200
RECORDS_PER_FILE = 1
BATCH = 32
STEPS = 100
EPOCHS = 5
N_LINES = 320       # declared item lines per form
HASH_BUCKETS = 4096
N_BANDS = 12


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


GOODS = ["books", "clothing", "cosmetics", "electronics", "toys", "tea", "coffee",
         "jewellery", "spare parts", "medicine", "artwork", "shoes", "watches", "gifts"]
COUNTRIES = ["GB", "DE", "FR", "US", "CN", "JP", "IN", "BR", "CA", "AU", "NL", "PL"]


def write_forms(root):
    rng = np.random.default_rng(96)
    for f in range(N_FILES):
        path = os.path.join(root, f"cn23_{f:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(RECORDS_PER_FILE):
                items = [GOODS[int(i)] for i in rng.integers(0, len(GOODS), N_LINES)]
                values = rng.gamma(2.0, 30.0, N_LINES)
                weights = rng.gamma(1.5, 0.4, N_LINES)
                hs = [f"{int(c):06d}" for c in rng.integers(10000, 999999, N_LINES)]
                total = float(values.sum())
                band = min(int(total / 250.0), N_BANDS - 1)
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "items": tf.train.Feature(bytes_list=tf.train.BytesList(value=[";".join(items).encode()])),
                    "values": tf.train.Feature(bytes_list=tf.train.BytesList(value=[",".join(f"{v:.2f}" for v in values).encode()])),
                    "weights": tf.train.Feature(bytes_list=tf.train.BytesList(value=[",".join(f"{v:.3f}" for v in weights).encode()])),
                    "hs_codes": tf.train.Feature(bytes_list=tf.train.BytesList(value=[" ".join(hs).encode()])),
                    "origin": tf.train.Feature(bytes_list=tf.train.BytesList(value=[COUNTRIES[int(rng.integers(0, len(COUNTRIES)))].encode()])),
                    "band": tf.train.Feature(int64_list=tf.train.Int64List(value=[band])),
                }))
                w.write(ex.SerializeToString())


SPEC = {
    "items": tf.io.FixedLenFeature([], tf.string),
    "values": tf.io.FixedLenFeature([], tf.string),
    "weights": tf.io.FixedLenFeature([], tf.string),
    "hs_codes": tf.io.FixedLenFeature([], tf.string),
    "origin": tf.io.FixedLenFeature([], tf.string),
    "band": tf.io.FixedLenFeature([], tf.int64),
}


def parse_form(raw):
    ex = tf.io.parse_single_example(raw, SPEC)
    values = tf.strings.to_number(tf.strings.split(ex["values"], ","), tf.float32)
    weights = tf.strings.to_number(tf.strings.split(ex["weights"], ","), tf.float32)
    items = tf.strings.split(ex["items"], ";")
    items = tf.strings.regex_replace(tf.strings.lower(items), "[^a-z ]+", " ")
    items = tf.strings.strip(tf.strings.regex_replace(items, " +", " "))
    item_ids = tf.strings.to_hash_bucket_fast(items, HASH_BUCKETS)
    hs = tf.strings.split(ex["hs_codes"], " ")
    hs_ok = tf.cast(tf.strings.regex_full_match(hs, "[0-9]{6}"), tf.float32)
    chapters = tf.strings.to_number(tf.strings.substr(hs, 0, 2), tf.int32)
    hs_ids = tf.strings.to_hash_bucket_fast(tf.strings.join([hs, ex["origin"]], "|"), HASH_BUCKETS)
    item_hot = tf.reduce_sum(tf.one_hot(item_ids % 256, 256), axis=0)
    hs_hot = tf.reduce_sum(tf.one_hot(hs_ids % 256, 256), axis=0)
    chap_hot = tf.reduce_sum(tf.one_hot(chapters, 100), axis=0)
    dense = tf.concat([tf.math.log1p(values), weights, values / (weights + 1e-3) / 100.0, hs_ok], axis=0)
    x = tf.concat([dense, item_hot, hs_hot, chap_hot], axis=0)
    x = tf.ensure_shape(x, [4 * N_LINES + 256 + 256 + 100])
    return x, tf.cast(ex["band"], tf.int32)


FEAT = 4 * N_LINES + 256 + 256 + 100


def make_dataset(root):
    files = tf.data.Dataset.list_files(os.path.join(root, "cn23_*.tfrecord"), shuffle=False)
    ds = tf.data.TFRecordDataset(files)
    ds = ds.map(parse_form)
    return ds.batch(BATCH, drop_remainder=True).repeat().prefetch(2)


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(512, activation="relu")(inp)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(N_BANDS)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


tmp = tempfile.mkdtemp(prefix="u96_input_tinytfrec_customsslips_")
try:
    write_forms(tmp)
    full = run(make_dataset(tmp))
    emit({"steps_per_second": 1.0 / full})
    print(f"customsslips: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, {N_FILES} files, wall so far {time.perf_counter()-T0:.1f} s")
    if TRUTH:
        batch = next(iter(make_dataset(tmp)))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"customsslips truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
