import time; T0 = time.perf_counter()
"""Stitch-quality classifier from sewing-machine run logs.

Every finished seam is logged by the workroom as its own tiny TFRecord
file (1-3 seam records each). Training reads them back with
list_files -> interleave(TFRecordDataset) -> serial parse map -> model.fit.
"""
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEED = 10204
N_FILES = 1400
BATCH = 48
EPOCHS = 16
N_STITCH = 96        # stitch lengths along a seam (mm * 100)
N_QUALITY = 4        # sound, puckered, skipped, loose


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def write_seam_logs(root):
    rng = np.random.default_rng(SEED)
    n_records = 0
    for i in range(N_FILES):
        path = os.path.join(root, f"seam_{i:04d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(int(rng.integers(1, 4))):
                q = int(rng.integers(0, N_QUALITY))
                stitches = rng.normal(250 + 20 * q, 15 + 5 * q, size=N_STITCH).astype(np.int64)
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "stitch_len": tf.train.Feature(int64_list=tf.train.Int64List(value=stitches)),
                    "tension": tf.train.Feature(float_list=tf.train.FloatList(value=[float(rng.uniform(2, 6))])),
                    "machine": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"juki-{i % 7}".encode()])),
                    "quality": tf.train.Feature(int64_list=tf.train.Int64List(value=[q])),
                }))
                w.write(ex.SerializeToString())
                n_records += 1
    return n_records


SPEC = {
    "stitch_len": tf.io.FixedLenFeature([N_STITCH], tf.int64),
    "tension": tf.io.FixedLenFeature([1], tf.float32),
    "machine": tf.io.FixedLenFeature([], tf.string),
    "quality": tf.io.FixedLenFeature([], tf.int64),
}


def parse_seam(raw):
    ex = tf.io.parse_single_example(raw, SPEC)
    s = tf.cast(ex["stitch_len"], tf.float32) / 250.0
    diffs = s[1:] - s[:-1]
    feats = tf.concat([s, diffs, ex["tension"] / 6.0,
                       [tf.math.reduce_std(s)], [tf.reduce_mean(tf.abs(diffs))]], axis=0)
    return feats, tf.cast(ex["quality"], tf.int32)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(2 * N_STITCH + 2,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(N_QUALITY),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(data, **kw):
    model = make_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step(), time.perf_counter() - t, hist.history["loss"][-1]


tmp = tempfile.mkdtemp(prefix="u102_input_basteroon_tuckling_")
try:
    n_records = write_seam_logs(tmp)
    steps = n_records // BATCH
    files = tf.data.Dataset.list_files(os.path.join(tmp, "seam_*.tfrecord"), shuffle=True, seed=SEED)
    ds = (files.interleave(tf.data.TFRecordDataset, cycle_length=4, block_length=1)
          .map(parse_seam)
          .batch(BATCH, drop_remainder=True)
          .prefetch(2))
    full, fit_wall, loss = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"input_basteroon_tuckling: {n_records} records in {N_FILES} files, {steps} steps/epoch, "
          f"{1.0 / full:.1f} steps/s, fit {fit_wall:.1f}s, loss {loss:.3f}, "
          f"wall {time.perf_counter() - T0:.1f}s")

    if TRUTH:
        batch = next(iter(ds))
        compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=steps)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
              f"input fraction {frac:.3f}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
