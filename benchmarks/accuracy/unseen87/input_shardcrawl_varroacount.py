import time; T0 = time.perf_counter()
import json
import os
import sys
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


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps never cross epochs."""

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

# Varroa sticky-board counts: every inspection of the bottom board is stored
# as its own tiny TFRecord file (one record: a PNG photo of the board, plus
# the beekeeper's CSV-style note and a few numeric fields).  tf.data lists the
# thousands of files, opens them one by one with TFRecordDataset and parses
# each record serially (parse_single_example, decode_png of the 192x192 photo,
# black-hat morphology, area resize, Sobel edges, note splitting).  model.fit regresses the mite count per 24 h.

import shutil
import tempfile

N_FILES = 1200
RAW = 192
SIZE = 96
BATCH = 32
STEPS = 60
EPOCHS = 2

FEATURES = {
    "board_png": tf.io.FixedLenFeature([], tf.string),
    "note": tf.io.FixedLenFeature([], tf.string),
    "days_on_board": tf.io.FixedLenFeature([], tf.float32),
    "colony_frames": tf.io.FixedLenFeature([], tf.float32),
    "mites_per_day": tf.io.FixedLenFeature([], tf.float32),
}


def write_boards(folder, rng):
    paths = []
    yy, xx = np.mgrid[-4:5, -4:5]
    for i in range(N_FILES):
        mites = int(rng.poisson(rng.uniform(1, 25)))
        board = rng.normal(200, 12, (RAW, RAW))
        for _ in range(mites):  # reddish-brown ovals on the white board
            cy, cx = rng.integers(5, RAW - 5, 2)
            patch = board[cy - 4:cy + 5, cx - 4:cx + 5]
            patch[(yy ** 2 + xx ** 2 / 1.4) < 9.0] = rng.uniform(40, 90)
        for _ in range(int(rng.integers(5, 30))):  # wax debris
            cy, cx = rng.integers(5, RAW - 5, 2)
            patch = board[cy - 4:cy + 5, cx - 4:cx + 5]
            patch[(yy ** 2 / 9 + xx ** 2) < 3.0] = rng.uniform(120, 170)
        png = tf.io.encode_png(np.clip(board, 0, 255).astype(np.uint8)[..., None]).numpy()
        days = float(rng.integers(1, 4))
        counts = ";".join(str(int(c)) for c in rng.poisson(mites / 4.0, 4))
        note = (f"2026-0{int(rng.integers(4, 10))}-{int(rng.integers(10, 28))},"
                f"apiary-{'ABC'[i % 3]},hive-{i % 40:02d},"
                f"treat={rng.choice(['none', 'oxalic', 'formic', 'thymol'])},"
                f"quadrants={counts}")
        ex = tf.train.Example(features=tf.train.Features(feature={
            "board_png": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
            "note": tf.train.Feature(bytes_list=tf.train.BytesList(value=[note.encode()])),
            "days_on_board": tf.train.Feature(float_list=tf.train.FloatList(value=[days])),
            "colony_frames": tf.train.Feature(
                float_list=tf.train.FloatList(value=[float(rng.integers(4, 20))])),
            "mites_per_day": tf.train.Feature(
                float_list=tf.train.FloatList(value=[mites / days])),
        }))
        path = os.path.join(folder, f"board_{i:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            w.write(ex.SerializeToString())
        paths.append(path)
    return paths


def parse_board(serialized):
    f = tf.io.parse_single_example(serialized, FEATURES)
    raw = tf.image.convert_image_dtype(tf.io.decode_png(f["board_png"], channels=1), tf.float32)
    raw = tf.reshape(raw, (1, RAW, RAW, 1))
    # black-hat (closing minus image) makes small dark mites stand out
    closing = -tf.nn.max_pool2d(-tf.nn.max_pool2d(raw, 5, 1, "SAME"), 5, 1, "SAME")
    blackhat = tf.image.resize(closing - raw, (SIZE, SIZE), method="area")[0]
    img = tf.image.per_image_standardization(
        tf.image.resize(raw, (SIZE, SIZE), method="area")[0])
    edges = tf.reshape(tf.image.sobel_edges(img[None])[0], (SIZE, SIZE, 2))
    dark = tf.cast(img < -1.5, tf.float32)
    parts = tf.strings.split(f["note"], ",")
    quads = tf.strings.to_number(
        tf.strings.split(tf.strings.regex_replace(parts[4], "quadrants=", ""), ";"),
        tf.float32)
    treated = tf.cast(tf.logical_not(tf.strings.regex_full_match(parts[3], "treat=none")),
                      tf.float32)
    side = tf.stack([f["days_on_board"], f["colony_frames"] / 20.0, treated,
                     tf.reduce_sum(quads) / 50.0])
    x = tf.concat([img, blackhat * 10.0, edges, dark], axis=-1)
    return (x, side), f["mites_per_day"]


def make_dataset(paths):
    files = tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=87)
    ds = tf.data.TFRecordDataset(files).map(parse_board)
    return ds.repeat().batch(BATCH)


def build_model():
    img_in = keras.Input((SIZE, SIZE, 5))
    side_in = keras.Input((4,))
    h = keras.layers.Conv2D(16, 3, activation="relu")(img_in)
    h = keras.layers.Conv2D(32, 3, strides=2, activation="relu")(h)
    h = keras.layers.Conv2D(48, 3, strides=2, activation="relu")(h)
    h = keras.layers.Conv2D(64, 3, strides=2, activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Concatenate()([h, side_in])
    h = keras.layers.Dense(64, activation="relu")(h)
    model = keras.Model([img_in, side_in], keras.layers.Dense(1)(h))
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


workdir = tempfile.mkdtemp(prefix="u87_input_shardcrawl_varroacount_")
try:
    paths = write_boards(workdir, np.random.default_rng(87))
    print(f"[varroacount] wrote {len(paths)} one-record files in "
          f"{time.perf_counter() - T0:.1f} s since start")
    keras.utils.set_random_seed(87)
    timer = StepTimer()
    model = build_model()
    model.fit(make_dataset(paths), steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer], verbose=0)
    full = seconds_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[varroacount] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"wall {time.perf_counter() - T0:.1f} s")

    if TRUTH:
        batch = next(iter(make_dataset(paths)))
        one = tf.data.Dataset.from_tensors(batch).repeat()
        keras.utils.set_random_seed(87)
        timer2 = StepTimer()
        model2 = build_model()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        compute = seconds_per_step(timer2.gaps)
        frac = truth_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[varroacount] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
