import time; T0 = time.perf_counter()
# Customer pickup tickets: every ticket printed at the counter is stored as
# its own tiny TFRecord file. tf.data reads thousands of these files and
# parses each record (proto parse + string splitting, regexes, hashing,
# date arithmetic) to predict whether the order will be picked up late.
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
        return sum(g) / len(g)


BATCH = 64
STEPS = 120
EPOCHS = 12
N_TICKETS = BATCH * STEPS
N_HASH = 512
GARMENTS = ["shirt", "suit2pc", "suit3pc", "dress", "coat", "duvet", "curtain", "tie", "trousers", "gown"]
SERVICES = ["wash_press", "dry_clean", "press_only", "stain_treat", "alterations", "express"]


def write_tickets(root, rng):
    files = []
    for i in range(N_TICKETS):
        n_items = int(rng.integers(1, 9))
        items = ";".join(f"{GARMENTS[int(rng.integers(0, len(GARMENTS)))]}:"
                         f"{SERVICES[int(rng.integers(0, len(SERVICES)))]}:{rng.uniform(2.5, 45):.2f}"
                         for _ in range(n_items))
        dropoff = int(rng.integers(0, 365))
        promised = dropoff + int(rng.integers(1, 6))
        note = rng.choice(["", "customer called", "RUSH!!", "button missing", "pay on pickup", "VIP - hand finish"])
        late = int((n_items > 5) or ("RUSH" in note and promised - dropoff < 2) or rng.random() < 0.15)
        ex = tf.train.Example(features=tf.train.Features(feature={
            "ticket": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"T{i:07d}-{rng.integers(100, 999)}".encode()])),
            "items": tf.train.Feature(bytes_list=tf.train.BytesList(value=[items.encode()])),
            "dates": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"2026-{dropoff:03d}|2026-{promised:03d}".encode()])),
            "note": tf.train.Feature(bytes_list=tf.train.BytesList(value=[note.encode()])),
            "store": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.integers(0, 40))])),
            "late": tf.train.Feature(int64_list=tf.train.Int64List(value=[late])),
        }))
        path = os.path.join(root, f"ticket_{i:06d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            w.write(ex.SerializeToString())
        files.append(path)
    return files


SPEC = {
    "ticket": tf.io.FixedLenFeature([], tf.string),
    "items": tf.io.FixedLenFeature([], tf.string),
    "dates": tf.io.FixedLenFeature([], tf.string),
    "note": tf.io.FixedLenFeature([], tf.string),
    "store": tf.io.FixedLenFeature([], tf.int64),
    "late": tf.io.FixedLenFeature([], tf.int64),
}


def parse_ticket(raw):
    ex = tf.io.parse_single_example(raw, SPEC)
    items = tf.strings.split(ex["items"], ";")
    parts = tf.strings.split(items, ":").to_tensor(default_value="0", shape=[None, 3])
    prices = tf.strings.to_number(parts[:, 2])
    g_hash = tf.strings.to_hash_bucket_fast(parts[:, 0], N_HASH)
    s_hash = tf.strings.to_hash_bucket_fast(tf.strings.join([parts[:, 0], parts[:, 1]], "/"), N_HASH)
    bag = (tf.reduce_sum(tf.one_hot(g_hash, N_HASH), 0)
           + tf.reduce_sum(tf.one_hot(s_hash, N_HASH), 0))
    d = tf.strings.split(ex["dates"], "|")
    day = tf.strings.to_number(tf.strings.regex_replace(d, r"^\d{4}-", ""))
    note = tf.strings.lower(ex["note"])
    rush = tf.cast(tf.strings.regex_full_match(note, r".*rush.*"), tf.float32)
    vip = tf.cast(tf.strings.regex_full_match(note, r".*vip.*"), tf.float32)
    tnum = tf.strings.to_number(tf.strings.substr(ex["ticket"], 1, 7))
    dense = tf.stack([tf.reduce_sum(prices) / 100.0, tf.reduce_max(prices) / 50.0,
                      tf.cast(tf.size(prices), tf.float32) / 8.0, (day[1] - day[0]) / 5.0,
                      day[0] / 365.0, rush, vip, tf.cast(ex["store"], tf.float32) / 40.0,
                      tf.math.floormod(tnum, 7.0) / 7.0])
    x = tf.concat([bag, dense], 0)
    return x, tf.cast(ex["late"], tf.float32)


def make_model():
    inp = keras.Input(shape=(N_HASH + 9,))
    x = keras.layers.Dense(640, activation="relu")(inp)
    x = keras.layers.Dense(384, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    keras.utils.set_random_seed(17)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


root = tempfile.mkdtemp(prefix="u92_input_onefileeach_pickuptickets_")
try:
    files = write_tickets(root, np.random.default_rng(92))
    ds = (tf.data.TFRecordDataset(tf.data.Dataset.from_tensor_slices(files))
          .map(parse_ticket).batch(BATCH, drop_remainder=True).repeat())
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[pickuptickets] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, "
          f"{len(files)} ticket files, wall {time.perf_counter()-T0:.1f}s")

    if TRUTH:
        one = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[pickuptickets] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
finally:
    shutil.rmtree(root, ignore_errors=True)
