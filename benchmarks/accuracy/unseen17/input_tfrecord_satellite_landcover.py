"""Land-cover classification of satellite tiles sharded into many small TFRecord files."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--n-shards", type=int, default=240)
parser.add_argument("--per-shard", type=int, default=4)
args = parser.parse_args()

TILE = 256
INPUT = 64
CLASSES = ["water", "forest", "cropland", "urban", "barren", "wetland", "grassland"]


def write_shards(root, prefix, n_shards, per_shard, seed):
    rng = np.random.default_rng(seed)
    files = []
    for s in range(n_shards):
        path = os.path.join(root, f"{prefix}-{s:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(per_shard):
                label = int(rng.integers(len(CLASSES)))
                tile = rng.integers(0, 255, size=(TILE, TILE, 3), dtype=np.uint8)
                tile[..., label % 3] //= 2
                feat = {
                    "image/encoded": tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[tf.io.encode_png(tile).numpy()])
                    ),
                    "image/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                    "geo/lat": tf.train.Feature(
                        float_list=tf.train.FloatList(value=[rng.uniform(-60, 60)])
                    ),
                    "geo/lon": tf.train.Feature(
                        float_list=tf.train.FloatList(value=[rng.uniform(-180, 180)])
                    ),
                    "meta/cloud": tf.train.Feature(
                        float_list=tf.train.FloatList(value=[rng.uniform(0, 1)])
                    ),
                }
                ex = tf.train.Example(features=tf.train.Features(feature=feat))
                w.write(ex.SerializeToString())
        files.append(path)
    return files


FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/label": tf.io.FixedLenFeature([], tf.int64),
    "geo/lat": tf.io.FixedLenFeature([], tf.float32),
    "geo/lon": tf.io.FixedLenFeature([], tf.float32),
    "meta/cloud": tf.io.FixedLenFeature([], tf.float32),
}


def parse_tile(serialized):
    ex = tf.io.parse_single_example(serialized, FEATURES)
    img = tf.io.decode_png(ex["image/encoded"], channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.random_crop(img, [TILE - 32, TILE - 32, 3])
    img = tf.image.random_flip_left_right(img)
    img = tf.image.random_flip_up_down(img)
    img = tf.image.rot90(img, k=tf.random.uniform([], 0, 4, dtype=tf.int32))
    img = tf.image.random_brightness(img, 0.1)
    img = tf.image.random_contrast(img, 0.8, 1.2)
    img = tf.image.random_saturation(img, 0.8, 1.2)
    img = tf.image.random_hue(img, 0.05)
    img = tf.image.random_jpeg_quality(tf.clip_by_value(img, 0.0, 1.0), 70, 95)
    img = tf.image.resize(img, [INPUT, INPUT], method="bicubic")
    img = tf.image.per_image_standardization(img)
    return img, ex["image/label"]


def make_dataset(files, batch_size, repeat=True):
    ds = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files), seed=0)
    if repeat:
        ds = ds.repeat()
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=1)
    ds = ds.map(parse_tile)
    return ds.batch(batch_size, drop_remainder=True)


def build_model():
    inp = keras.Input(shape=(INPUT, INPUT, 3))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(len(CLASSES), activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))


def seconds_per_step(stamps, skip=5):
    gaps = [t1 - t0 for (e0, t0), (e1, t1) in zip(stamps, stamps[1:]) if e0 == e1]
    return float(np.mean(gaps[skip - 1 :]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(train_ds, val_ds):
    model = build_model()
    clock = StepClock()
    model.fit(
        train_ds,
        steps_per_epoch=args.steps,
        epochs=args.epochs,
        validation_data=val_ds,
        callbacks=[clock],
        verbose=0,
    )
    return seconds_per_step(clock.stamps)


def main():
    tmp = tempfile.mkdtemp(prefix="u17_landcover_")
    try:
        t0 = time.time()
        train_files = write_shards(tmp, "train", args.n_shards, args.per_shard, 1)
        val_files = write_shards(tmp, "val", 16, args.per_shard, 2)
        print(f"wrote {len(train_files) + len(val_files)} shards in {time.time() - t0:.1f}s")
        train_ds = make_dataset(train_files, args.batch_size)
        val_ds = make_dataset(val_files, args.batch_size, repeat=False)
        full = train(train_ds, val_ds)
        write_result({"steps_per_second": 1.0 / full})
        msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            batch = next(iter(train_ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute = train(cached, val_ds)
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_result({"truth_input_fraction": frac})
            msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
