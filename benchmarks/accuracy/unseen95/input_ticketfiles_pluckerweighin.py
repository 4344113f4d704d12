"""Plucker crew weigh-in tickets -> green-leaf payable kilograms.

The weighing shed exports one tiny TFRecord file per ticket (hundreds of
files).  tf.data lists the files, reads them one after another with
TFRecordDataset and parses every ticket: tf.io.parse_single_example, then
string surgery on the ticket header and the pipe-separated scale readings.
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

BATCH = 128
STEPS = 140
EPOCHS = 3
N_TICKETS = 600
N_WEIGHINGS = 96


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


def _bytes(v):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))


def write_tickets(folder, seed):
    rng = np.random.default_rng(seed)
    for i in range(N_TICKETS):
        crew = "C%02d" % rng.integers(1, 30)
        field = "F%03d" % rng.integers(1, 120)
        session = ["AM", "MID", "PM"][rng.integers(3)]
        fine = rng.uniform(0.55, 0.9)
        w = rng.gamma(6.0, 2.1, N_WEIGHINGS)
        header = "CREW=%s;PLUCKER=P%04d;FIELD=%s;SESSION=%s;FINE_LEAF=%.2f;MOIST=%.1f" % (
            crew, rng.integers(1, 4000), field, session, fine, rng.uniform(70, 80))
        readings = "|".join("%.2f" % v for v in w)
        tares = "|".join("%.2f" % v for v in rng.uniform(0.3, 0.6, N_WEIGHINGS))
        payable = float(np.sum(w) * fine / 100.0)
        ex = tf.train.Example(features=tf.train.Features(feature={
            "header": _bytes(header.encode()),
            "readings": _bytes(readings.encode()),
            "tares": _bytes(tares.encode()),
            "payable": tf.train.Feature(float_list=tf.train.FloatList(value=[payable])),
        }))
        with tf.io.TFRecordWriter(os.path.join(folder, "ticket_%05d.tfrecord" % i)) as wr:
            wr.write(ex.SerializeToString())


SPEC = {
    "header": tf.io.FixedLenFeature([], tf.string),
    "readings": tf.io.FixedLenFeature([], tf.string),
    "tares": tf.io.FixedLenFeature([], tf.string),
    "payable": tf.io.FixedLenFeature([], tf.float32),
}


def parse_ticket(serialized):
    ex = tf.io.parse_single_example(serialized, SPEC)
    fields = tf.strings.split(ex["header"], ";")
    kv = tf.strings.split(fields, "=")
    values = kv.flat_values[1::2]
    crew = tf.strings.to_hash_bucket_fast(values[0], 32)
    field = tf.strings.to_hash_bucket_fast(values[2], 128)
    session = tf.strings.to_hash_bucket_fast(values[3], 4)
    fine = tf.strings.to_number(values[4])
    moist = tf.strings.to_number(values[5])
    gross = tf.strings.to_number(tf.strings.split(ex["readings"], "|"))
    tare = tf.strings.to_number(tf.strings.split(tf.strings.regex_replace(ex["tares"], r"\s", ""), "|"))
    net = tf.reshape(gross - tare, [N_WEIGHINGS])
    stats = tf.stack([tf.reduce_mean(net), tf.math.reduce_std(net), tf.reduce_max(net),
                      fine, (moist - 75.0) / 5.0])
    ids = tf.concat([tf.one_hot(crew, 32), tf.one_hot(field, 128), tf.one_hot(session, 4)], 0)
    x = tf.concat([net / 20.0, stats, ids], 0)
    return x, ex["payable"]


def make_dataset(folder):
    files = tf.data.Dataset.list_files(os.path.join(folder, "ticket_*.tfrecord"), shuffle=False)
    ds = tf.data.TFRecordDataset(files).map(parse_ticket)
    return ds.shuffle(256, seed=5).repeat().batch(BATCH).prefetch(2)


FEATS = N_WEIGHINGS + 5 + 32 + 128 + 4


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


folder = tempfile.mkdtemp(prefix="u95_input_ticketfiles_pluckerweighin_")
try:
    write_tickets(folder, 31)
    full = train(make_dataset(folder))
    emit({"steps_per_second": 1.0 / full})
    print("[pluckerweighin] normal run: %.4f s/step, %.2f steps/s, wall %.1f s"
          % (full, 1.0 / full, time.perf_counter() - T0))
    if TRUTH:
        one = next(iter(make_dataset(folder)))
        compute = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print("[pluckerweighin] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
              % (full, compute, frac))
finally:
    shutil.rmtree(folder, ignore_errors=True)
