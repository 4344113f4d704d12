"""Clay moisture readings -> wedging-readiness regressor.

Every reclaim bucket / pugged bag in the studio gets a capacitive moisture
probe reading sweep, written by the logger as its own tiny TFRecord file
(one record per file, the raw sweep kept as a CSV string as the logger
produced it).  tf.data lists the thousands of small files, reads them
one after another and parses each record heavily (parse_single_example,
CSV split, string->number, calibration curve, derivative features).
"""
import time; T0 = time.perf_counter()
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

N_FILES = 1200
SWEEP = 1024
RAW = 4 * SWEEP      # logger oversamples 4x
BATCH = 32
STEPS = 250
EPOCHS = 3


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def write_probe_files(root):
    r = np.random.default_rng(91)
    bodies = [b"b-mix", b"porcelain", b"stoneware", b"terracotta", b"paper-clay"]
    for i in range(N_FILES):
        moisture = r.uniform(15, 32)
        f = np.linspace(10, 200, RAW)
        sweep = 800 / (1 + ((f - 60 - moisture) / 25) ** 2) + r.normal(0, 4, RAW)
        ex = tf.train.Example(features=tf.train.Features(feature={
            "bucket": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"bucket-{i:05d}".encode()])),
            "body": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bodies[i % 5]])),
            "temp_c": tf.train.Feature(float_list=tf.train.FloatList(value=[r.uniform(12, 26)])),
            "sweep_csv": tf.train.Feature(bytes_list=tf.train.BytesList(value=[",".join(map("{:.2f}".format, sweep)).encode()])),
            "moisture_pct": tf.train.Feature(float_list=tf.train.FloatList(value=[moisture])),
        }))
        with tf.io.TFRecordWriter(os.path.join(root, f"probe_{i:05d}.tfrecord")) as w:
            w.write(ex.SerializeToString())


SPEC = {
    "bucket": tf.io.FixedLenFeature([], tf.string),
    "body": tf.io.FixedLenFeature([], tf.string),
    "temp_c": tf.io.FixedLenFeature([], tf.float32),
    "sweep_csv": tf.io.FixedLenFeature([], tf.string),
    "moisture_pct": tf.io.FixedLenFeature([], tf.float32),
}
BODY_TABLE = tf.constant([b"b-mix", b"porcelain", b"stoneware", b"terracotta", b"paper-clay"])


def parse_probe(serialized):
    ex = tf.io.parse_single_example(serialized, SPEC)
    vals = tf.strings.to_number(tf.strings.split(ex["sweep_csv"], ","), tf.float32)
    vals = tf.reduce_mean(tf.reshape(vals, [SWEEP, 4]), axis=1)
    # temperature compensation + calibration curve of the probe
    vals = vals * (1.0 + 0.0021 * (ex["temp_c"] - 20.0))
    vals = 0.92 * vals + 0.00004 * vals * vals
    smooth = tf.nn.avg_pool1d(vals[None, :, None], 9, 1, "SAME")[0, :, 0]
    deriv = smooth[1:] - smooth[:-1]
    deriv = tf.concat([deriv, deriv[-1:]], 0)
    peak = tf.cast(tf.argmax(smooth), tf.float32) / SWEEP
    x = tf.stack([smooth / 800.0, deriv / 20.0, tf.fill([SWEEP], peak)], axis=1)
    body = tf.one_hot(tf.argmax(tf.cast(tf.equal(BODY_TABLE, ex["body"]), tf.int32)), 5)
    return (x, body), (ex["moisture_pct"] - 22.0) / 5.0


def make_model():
    s_in = keras.Input((SWEEP, 3))
    b_in = keras.Input((5,))
    x = keras.layers.Conv1D(48, 9, strides=4, padding="same", activation="relu")(s_in)
    x = keras.layers.Conv1D(64, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    h = keras.layers.Concatenate()([x, b_in])
    h = keras.layers.Dense(64, activation="relu")(h)
    return keras.Model([s_in, b_in], keras.layers.Dense(1)(h))


def train(dataset):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    timer = StepTimer()
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


root = tempfile.mkdtemp(prefix="u91_input_tfrecsmall_claymoisture_")
try:
    write_probe_files(root)
    files = tf.data.Dataset.list_files(os.path.join(root, "probe_*.tfrecord"), shuffle=True, seed=91)
    ds = tf.data.TFRecordDataset(files).map(parse_probe).repeat().batch(BATCH)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"claymoisture: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f}s")

    if TRUTH:
        fixed = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"claymoisture: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
finally:
    shutil.rmtree(root, ignore_errors=True)
