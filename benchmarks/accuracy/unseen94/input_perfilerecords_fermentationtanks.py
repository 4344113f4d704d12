import time; T0 = time.perf_counter()
import json
import os
import sys
import tempfile
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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


# Fermentation tank logs: the cellar controller drops one tiny TFRecord file per
# tank-day (2 records each, hundreds of files). Each record holds a text log of
# 5-minute readings "HH:MM,tank=T07,temp=18.42,brix=21.3,density=1.0874,pump=0".
# tf.data reads the files in order and parses every record with string ops
# (split lines, strip keys with regex, split fields, to_number), no parallel calls.
N_FILES = 480
RECS_PER_FILE = 2
READINGS = 288
BATCH = 16
EPOCHS = 20
SEED = 94


def write_logs(root):
    rng = np.random.default_rng(SEED)
    paths = []
    for f in range(N_FILES):
        path = os.path.join(root, "tank%02d_day%04d.tfrecord" % (f % 24, f))
        with tf.io.TFRecordWriter(path) as w:
            for r in range(RECS_PER_FILE):
                stuck = rng.random() < 0.3
                t = np.arange(READINGS) / READINGS
                brix = 24.0 * np.exp(-t * (0.8 if stuck else 3.0)) + rng.normal(0, 0.1, READINGS)
                temp = 14.0 + 10.0 * np.sin(t * 3.0) * (0.5 if stuck else 1.0) + rng.normal(0, 0.2, READINGS)
                dens = 0.99 + 0.004 * brix
                lines = ["%02d:%02d,tank=T%02d,temp=%.2f,brix=%.2f,density=%.4f,pump=%d"
                         % ((i * 5) // 60, (i * 5) % 60, f % 24, temp[i], brix[i], dens[i], i % 5 == 0)
                         for i in range(READINGS)]
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "log": tf.train.Feature(bytes_list=tf.train.BytesList(value=["\n".join(lines).encode()])),
                    "stuck": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(stuck)])),
                }))
                w.write(ex.SerializeToString())
        paths.append(path)
    return paths


SPEC = {"log": tf.io.FixedLenFeature([], tf.string), "stuck": tf.io.FixedLenFeature([], tf.int64)}


def parse_record(serialized):
    ex = tf.io.parse_single_example(serialized, SPEC)
    lines = tf.strings.split(ex["log"], "\n")
    hh = tf.strings.to_number(tf.strings.substr(lines, 0, 2), tf.float32)
    mm = tf.strings.to_number(tf.strings.substr(lines, 3, 2), tf.float32)
    tod = (hh * 60.0 + mm) / 1440.0
    lines = tf.strings.regex_replace(lines, r"(tank|temp|brix|density|pump)=", "")
    lines = tf.strings.regex_replace(lines, r"^(\d\d):(\d\d),T\d\d,", "")
    fields = tf.strings.split(lines, ",").to_tensor(shape=(READINGS, 4))
    vals = tf.strings.to_number(fields, tf.float32)
    vals = (vals - tf.constant([18.0, 12.0, 1.03, 0.2])) / tf.constant([5.0, 8.0, 0.03, 0.4])
    vals = tf.concat([vals, tod[:, None]], axis=1)
    return vals, tf.cast(ex["stuck"], tf.float32)


def make_dataset(paths):
    ds = tf.data.TFRecordDataset(paths).map(parse_record)
    return ds.repeat().batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((READINGS, 5)),
        keras.layers.Conv1D(32, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(32, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


STEPS_PER_EPOCH = N_FILES * RECS_PER_FILE // BATCH


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


root = tempfile.mkdtemp(prefix="u94_input_perfilerecords_fermentationtanks_")
try:
    paths = write_logs(root)
    full = run(make_dataset(paths))
    emit({"steps_per_second": 1.0 / full})
    print("fermentation tiny TFRecords: %d files, %.2f ms/step, %.1f steps/s, wall %.1f s"
          % (len(paths), full * 1e3, 1.0 / full, time.perf_counter() - T0))
    if TRUTH:
        one = next(iter(make_dataset(paths)))
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
finally:
    shutil.rmtree(root, ignore_errors=True)
