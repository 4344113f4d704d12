import time; T0 = time.perf_counter()
"""River gauge readings -> runnable paddling level (too low / good / high / flood).

Each gauge upload (one station, one day of 15-minute stage and discharge
readings as CSV text) is stored as its own tiny TFRecord file, as a
telemetry bucket would hold them. tf.data lists the files, reads them one
record at a time and parses each record heavily with string ops: split the
CSV text, convert to numbers, rolling differences, min/max/quantile-style
statistics, and station metadata.
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

BATCH = 32
STEPS = 240
EPOCHS = 3
N_FILES = 1920
READINGS = 96 * 2   # two days of 15-minute readings
STATIONS = 40
DIM = 2 * (12 + (READINGS - 16) // 8 + 1) + READINGS // 4 + STATIONS


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


def write_uploads(root):
    rng = np.random.default_rng(82)
    paths = []
    for i in range(N_FILES):
        station = int(rng.integers(STATIONS))
        base = 0.5 + 2.5 * rng.random()
        stage = base + np.cumsum(rng.normal(0, 0.02, READINGS))
        flow = 12.0 * np.maximum(stage, 0.05) ** 1.6
        stage_txt = ",".join(f"{v:.3f}" for v in stage)
        flow_txt = ",".join(f"{v:.2f}" for v in flow)
        level = int(np.digitize(stage.mean(), [1.0, 2.0, 2.8]))
        ex = tf.train.Example(features=tf.train.Features(feature={
            "station": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"USGS-{13300000 + station}".encode()])),
            "stage_ft": tf.train.Feature(bytes_list=tf.train.BytesList(value=[stage_txt.encode()])),
            "flow_cfs": tf.train.Feature(bytes_list=tf.train.BytesList(value=[flow_txt.encode()])),
            "level": tf.train.Feature(int64_list=tf.train.Int64List(value=[level])),
        }))
        path = os.path.join(root, f"gauge_{i:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            w.write(ex.SerializeToString())
        paths.append(path)
    return paths


SPEC = {
    "station": tf.io.FixedLenFeature([], tf.string),
    "stage_ft": tf.io.FixedLenFeature([], tf.string),
    "flow_cfs": tf.io.FixedLenFeature([], tf.string),
    "level": tf.io.FixedLenFeature([], tf.int64),
}


def summarise(series):
    d = series[1:] - series[:-1]
    srt = tf.sort(series)
    n = tf.shape(srt)[0]
    q = tf.gather(srt, [n // 10, n // 4, n // 2, (3 * n) // 4, (9 * n) // 10])
    win = tf.signal.frame(series, 16, 8)
    roll = tf.reduce_mean(win, axis=1)
    return tf.concat([
        q,
        [tf.reduce_mean(series), tf.math.reduce_std(series), tf.reduce_min(series), tf.reduce_max(series)],
        [tf.reduce_mean(d), tf.math.reduce_std(d), tf.reduce_max(tf.abs(d))],
        roll,
    ], axis=0)


def parse(record):
    ex = tf.io.parse_single_example(record, SPEC)
    stage = tf.strings.to_number(tf.strings.split(ex["stage_ft"], ","), tf.float32)
    flow = tf.strings.to_number(tf.strings.split(ex["flow_cfs"], ","), tf.float32)
    flow = tf.math.log1p(flow)
    sid = tf.strings.to_number(tf.strings.substr(ex["station"], 5, 8), tf.int64)
    onehot = tf.one_hot(tf.cast(sid - 13300000, tf.int32), STATIONS)
    stage_n = tf.reshape(stage, [READINGS // 4, 4])
    stage_hourly = tf.reduce_mean(stage_n, axis=1)
    x = tf.concat([summarise(stage), summarise(flow), stage_hourly, onehot], axis=0)
    x = tf.ensure_shape(x, [DIM])
    return x, tf.cast(ex["level"], tf.int32)


def make_dataset(paths):
    files = tf.data.Dataset.from_tensor_slices(paths).repeat()
    ds = files.flat_map(tf.data.TFRecordDataset)
    return ds.map(parse).batch(BATCH).prefetch(1)


def build_model(dim):
    keras.utils.set_random_seed(82)
    model = keras.Sequential([
        keras.Input((dim,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(4),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main():
    root = tempfile.mkdtemp(prefix="u82_input_tinyrecords_paddlegauges_")
    try:
        paths = write_uploads(root)
        ds = make_dataset(paths)
        dim = DIM
        timer = StepTimer()
        model = build_model(dim)
        model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"paddlegauges: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps, {len(paths)} files"
        if TRUTH:
            batch = next(iter(make_dataset(paths)))
            ttimer = StepTimer()
            tmodel = build_model(dim)
            tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                       epochs=EPOCHS, callbacks=[ttimer], verbose=0)
            compute = ttimer.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
        print(msg + f", wall {time.perf_counter() - T0:.1f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
