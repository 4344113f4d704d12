"""Automatic weather stations with weighing pluviometers: classify the next-day rain category.

Station loggers upload one tiny TFRecord file per station-day batch (a handful of records
each). Every record carries the day's 5-minute pluviometer, temperature and pressure series
as comma-separated text with quality flags ("M" missing, "T" trace, "E" estimated). A tf.data
pipeline reads the thousands of small files in order, parses each record with
parse_single_example, cleans the flag codes with regexes, splits and converts the strings to
numbers, aggregates them to hourly features, and feeds model.fit.
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

N_FILES = 2400
RECS_PER_FILE = 4
SLOTS = 288
BATCH = 32
STEPS = 400
EPOCHS = 4
N_CLASSES = 5
N_FEAT = 24 * 3 + 3


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
        g = self.gaps[5:]
        return sum(g) / len(g)


def write_logger_files(root):
    rng = np.random.default_rng(7906)
    paths = []
    for fi in range(N_FILES):
        path = os.path.join(root, f"aws_{fi % 97:03d}_{fi:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(RECS_PER_FILE):
                wet = rng.random() < 0.45
                rain = rng.gamma(0.4, 0.6, SLOTS) * (rng.random(SLOTS) < (0.3 if wet else 0.02))
                temp = 12 + 6 * np.sin(np.linspace(0, 2 * np.pi, SLOTS)) + rng.normal(0, 0.3, SLOTS)
                pres = 1012 - (6 if wet else 0) * np.linspace(0, 1, SLOTS) + rng.normal(0, 0.2, SLOTS)
                def enc(vals, fmt):
                    toks = [fmt % v for v in vals]
                    for k in rng.choice(SLOTS, 6, replace=False):
                        toks[k] = rng.choice(["M", "T", "E" + toks[k]])
                    return ",".join(toks).encode()
                cat = min(int(rain.sum() // 4), N_CLASSES - 1)
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "station": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"AWS{fi % 97:03d}".encode()])),
                    "rain": tf.train.Feature(bytes_list=tf.train.BytesList(value=[enc(rain, "%.2f")])),
                    "temp": tf.train.Feature(bytes_list=tf.train.BytesList(value=[enc(temp, "%.1f")])),
                    "pres": tf.train.Feature(bytes_list=tf.train.BytesList(value=[enc(pres, "%.1f")])),
                    "elev": tf.train.Feature(float_list=tf.train.FloatList(value=[float(rng.uniform(0, 2000))])),
                    "next_cat": tf.train.Feature(int64_list=tf.train.Int64List(value=[cat])),
                }))
                w.write(ex.SerializeToString())
        paths.append(path)
    return paths


SPEC = {
    "station": tf.io.FixedLenFeature([], tf.string),
    "rain": tf.io.FixedLenFeature([], tf.string),
    "temp": tf.io.FixedLenFeature([], tf.string),
    "pres": tf.io.FixedLenFeature([], tf.string),
    "elev": tf.io.FixedLenFeature([], tf.float32),
    "next_cat": tf.io.FixedLenFeature([], tf.int64),
}


def series(s, missing):
    s = tf.strings.regex_replace(s, r"(^|,)E", r"\1")          # estimated -> keep value
    s = tf.strings.regex_replace(s, r"(^|,)T(,|$)", r"\1" + "0.05" + r"\2")  # trace
    s = tf.strings.regex_replace(s, r"(^|,)T(,|$)", r"\1" + "0.05" + r"\2")
    s = tf.strings.regex_replace(s, r"(^|,)M(,|$)", r"\1" + missing + r"\2")
    s = tf.strings.regex_replace(s, r"(^|,)M(,|$)", r"\1" + missing + r"\2")
    v = tf.strings.to_number(tf.strings.split(s, ","), tf.float32)
    return tf.reshape(v[:SLOTS], (24, 12))


def parse(raw):
    ex = tf.io.parse_single_example(raw, SPEC)
    rain = series(ex["rain"], "0")
    temp = series(ex["temp"], "-99")
    pres = series(ex["pres"], "-99")
    temp = tf.where(temp < -90, tf.reduce_mean(tf.boolean_mask(temp, temp > -90)), temp)
    pres = tf.where(pres < -90, tf.reduce_mean(tf.boolean_mask(pres, pres > -90)), pres)
    hourly_rain = tf.math.log1p(tf.reduce_sum(rain, axis=1))
    hourly_t = tf.reduce_mean(temp, axis=1) / 20.0
    hourly_dp = (pres[:, -1] - pres[:, 0]) * 2.0
    trend = (tf.reduce_mean(pres[-3:]) - tf.reduce_mean(pres[:3])) / 10.0
    st = tf.strings.to_number(tf.strings.substr(ex["station"], 3, 3), tf.float32) / 100.0
    x = tf.concat([hourly_rain, hourly_t, hourly_dp, [trend, ex["elev"] / 1000.0, st]], axis=0)
    return x, ex["next_cat"]


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out, name="raincat")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return m


tmp = tempfile.mkdtemp(prefix="u79_input_tinyrec_pluviometer_")
try:
    files = write_logger_files(tmp)
    ds = (tf.data.TFRecordDataset(files)
          .map(parse)
          .repeat()
          .batch(BATCH)
          .prefetch(1))

    keras.utils.set_random_seed(79)
    model = make_model()
    timer = StepTimer()
    t_fit = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    fit_s = time.perf_counter() - t_fit
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"pluviometer tinyrec: {len(files)} files, {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, "
          f"fit {fit_s:.1f}s, wall {time.perf_counter()-T0:.1f}s")

    if TRUTH:
        xb, yb = next(iter(ds.take(1)))
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        keras.utils.set_random_seed(79)
        model2 = make_model()
        timer2 = StepTimer()
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
