import time; T0 = time.perf_counter()
"""Map-sheet catalogue model read from hundreds of tiny TFRecord files.

The catalogue is exported one sheet series per file (1-3 records each): a
text catalogue line ("sheet|scale|edition|year|corners") and 64 spot heights
sampled across the sheet.  Training reads them with list_files ->
interleave(TFRecordDataset) -> a serial parsing map that splits the catalogue
text with tf.strings, and predicts the sheet's scale series.
"""
import json
import os
import random
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_FILES = 600
BATCH = 32
STEPS = 600
EPOCHS = 3
SCALES = [10000, 25000, 50000, 100000, 250000]


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


def write_catalogue(folder):
    rng = random.Random(17)
    nrec = 0
    for f in range(N_FILES):
        path = os.path.join(folder, f"series_{f:04d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(rng.randint(1, 3)):
                sc = rng.randrange(len(SCALES))
                lat = 49.9 + rng.random() * 8.0
                lon = -7.5 + rng.random() * 9.0
                span = SCALES[sc] / 250000.0
                line = (f"{rng.randint(1, 999)}/{rng.randint(1, 16)}|1:{SCALES[sc]}|"
                        f"{rng.randint(1, 9)}|{rng.randint(1950, 2024)}|"
                        f"{lat:.4f},{lon:.4f},{lat + span:.4f},{lon + span * 1.6:.4f}")
                relief = rng.uniform(20, 900)
                heights = [max(0.0, rng.gauss(relief, relief * span * 0.5)) for _ in range(64)]
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "catalogue": tf.train.Feature(bytes_list=tf.train.BytesList(value=[line.encode()])),
                    "spot_heights": tf.train.Feature(float_list=tf.train.FloatList(value=heights)),
                    "series": tf.train.Feature(int64_list=tf.train.Int64List(value=[sc])),
                }))
                w.write(ex.SerializeToString())
                nrec += 1
    return nrec


SPEC = {
    "catalogue": tf.io.FixedLenFeature([], tf.string),
    "spot_heights": tf.io.FixedLenFeature([64], tf.float32),
    "series": tf.io.FixedLenFeature([], tf.int64),
}


def parse(record):
    ex = tf.io.parse_single_example(record, SPEC)
    fields = tf.strings.split(ex["catalogue"], "|")
    edition = tf.strings.to_number(fields[2])
    year = tf.strings.to_number(fields[3])
    corners = tf.strings.to_number(tf.strings.split(fields[4], ","))
    extent = tf.stack([corners[2] - corners[0], corners[3] - corners[1]])
    heights = ex["spot_heights"] / 1000.0
    stats = tf.stack([tf.reduce_mean(heights), tf.math.reduce_std(heights),
                      edition / 9.0, (year - 1987.0) / 37.0])
    x = tf.concat([heights, extent * 10.0, stats], axis=0)
    return x, tf.cast(ex["series"], tf.int32)


def make_dataset(folder):
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.tfrecord"), shuffle=True, seed=3)
    ds = files.repeat().interleave(tf.data.TFRecordDataset, cycle_length=4, block_length=1)
    return ds.map(parse).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(13)
    model = keras.Sequential([
        keras.Input((70,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(len(SCALES)),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


folder = tempfile.mkdtemp(prefix="u99_input_shardtrickle_mapsheetry_")
try:
    nrec = write_catalogue(folder)
    full = train(make_dataset(folder))
    emit({"steps_per_second": 1.0 / full})
    print(f"mapsheetry: {N_FILES} files / {nrec} records, run {full * 1000:.1f} ms/step, "
          f"{1.0 / full:.1f} steps/s, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = next(iter(make_dataset(folder)))
        compute = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"mapsheetry: truth compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
finally:
    shutil.rmtree(folder, ignore_errors=True)
