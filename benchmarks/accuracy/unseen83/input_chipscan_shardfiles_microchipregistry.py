import time; T0 = time.perf_counter()
import json
import os
import sys
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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(gaps) / len(gaps)


# Microchip registry scans: every clinic/shelter upload is a tiny TFRecord file
# (a couple of records). Each record holds a 15-digit ISO chip id and a scan log
# "timestamp|reader|rssi|body_temp;..." that is parsed with tf.strings ops.
NUM_FILES = 2400
RECORDS_PER_FILE = 2
SCANS_PER_RECORD = 12
NUM_FEATS = 24 + 16 + 6
BATCH = 64
STEPS = 200
EPOCHS = 3
READERS = ["HomeAgain-HS", "AVID-MiniTracker3", "Datamars-ISO", "Destron-GlobalScan",
           "Halo-Scanner", "Petlink-PRO", "BackHome-Reader"]


def make_example(rng):
    chip = "%03d%012d" % (rng.choice([900, 981, 985, 956, 941]), rng.integers(0, 10**12))
    scans = []
    for _ in range(SCANS_PER_RECORD):
        scans.append("2026-%02d-%02dT%02d:%02d:%02d|%s|rssi=%d|temp=%.1f" % (
            rng.integers(1, 13), rng.integers(1, 29), rng.integers(0, 24), rng.integers(0, 60),
            rng.integers(0, 60), READERS[rng.integers(len(READERS))], rng.integers(-90, -30),
            rng.uniform(36.5, 40.2)))
    found_owner = int(rng.random() < 0.6)
    feat = {
        "chip_id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[chip.encode()])),
        "scan_log": tf.train.Feature(bytes_list=tf.train.BytesList(value=[";".join(scans).encode()])),
        "owner_found": tf.train.Feature(int64_list=tf.train.Int64List(value=[found_owner])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feat)).SerializeToString()


def write_shards(folder):
    rng = np.random.default_rng(83)
    paths = []
    for i in range(NUM_FILES):
        path = os.path.join(folder, "upload_%05d.tfrecord" % i)
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(RECORDS_PER_FILE):
                w.write(make_example(rng))
        paths.append(path)
    return paths


SPEC = {"chip_id": tf.io.FixedLenFeature([], tf.string),
        "scan_log": tf.io.FixedLenFeature([], tf.string),
        "owner_found": tf.io.FixedLenFeature([], tf.int64)}


def parse_scan(serialized):
    ex = tf.io.parse_single_example(serialized, SPEC)
    scans = tf.strings.split(ex["scan_log"], ";")
    fields = tf.strings.split(scans, "|").to_tensor(default_value="", shape=[None, 4])
    stamp = fields[:, 0]
    hour = tf.strings.to_number(tf.strings.substr(stamp, 11, 2), tf.int32)
    month = tf.strings.to_number(tf.strings.substr(stamp, 5, 2), tf.int32)
    rssi = tf.strings.to_number(tf.strings.regex_replace(fields[:, 2], r"^rssi=", ""))
    temp = tf.strings.to_number(tf.strings.regex_replace(fields[:, 3], r"^temp=", ""))
    reader = tf.strings.to_hash_bucket_fast(tf.strings.lower(fields[:, 1]), 16)
    hour_hist = tf.math.bincount(hour, minlength=24, maxlength=24, dtype=tf.float32)
    reader_hist = tf.math.bincount(tf.cast(reader, tf.int32), minlength=16, maxlength=16,
                                   dtype=tf.float32)
    chip = ex["chip_id"]
    country = tf.strings.to_number(tf.strings.substr(chip, 0, 3), tf.float32)
    valid = tf.cast(tf.strings.regex_full_match(chip, r"9[0-9]{14}"), tf.float32)
    stats = tf.stack([tf.reduce_mean(rssi) / 60.0, tf.math.reduce_std(rssi) / 20.0,
                      tf.reduce_mean(temp) - 38.0, tf.reduce_max(temp) - 38.0,
                      (country - 940.0) / 40.0 + valid,
                      tf.reduce_mean(tf.cast(month, tf.float32)) / 12.0])
    feats = tf.concat([hour_hist / SCANS_PER_RECORD, reader_hist / SCANS_PER_RECORD, stats], 0)
    label = tf.cast(tf.reshape(ex["owner_found"], [1]), tf.float32)
    return feats, label


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((NUM_FEATS,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(dataset):
    model = build_model()
    timer = StepTimer()
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


tmp = tempfile.mkdtemp(prefix="u83_input_chipscan_shardfiles_microchipregistry_")
try:
    files = write_shards(tmp)
    scans_ds = (tf.data.TFRecordDataset(tf.data.Dataset.from_tensor_slices(files).repeat())
                .map(parse_scan)
                .batch(BATCH, drop_remainder=True))
    full = train(scans_ds)
    emit({"steps_per_second": 1.0 / full})
    summary = "microchip tiny TFRecords (%d files): %.2f ms/step" % (NUM_FILES, full * 1000)
    if TRUTH:
        fixed = next(iter(tf.data.TFRecordDataset(files[:BATCH]).map(parse_scan).batch(BATCH)))
        compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
    print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
