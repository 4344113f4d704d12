"""Leaf-disease classifier for field photos of cassava plants, read from JPEG TFRecord shards."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf

N_IMAGES = 150
N_SHARDS = 4
IMAGE_SIZE = 544
RESIZE = 192
CROP = 128
BATCH_SIZE = 32
STEPS = 70
N_CLASSES = 5


def synth_leaf(rng, label):
    yy, xx = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE] / IMAGE_SIZE
    base = np.stack([0.2 + 0.2 * yy, 0.5 + 0.3 * xx * yy, 0.15 + 0.1 * xx], -1)
    for _ in range(3 + 4 * label):
        cy, cx, r = rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9), rng.uniform(0.02, 0.08)
        spot = ((yy - cy) ** 2 + (xx - cx) ** 2) < r**2
        base[spot] = [0.55, 0.4 + 0.05 * label, 0.1]
    img = base + rng.normal(0, 0.06, base.shape)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8)


def write_shards(root, seed=0):
    rng = np.random.default_rng(seed)
    paths = [
        os.path.join(root, f"leaves-{i:03d}-of-{N_SHARDS:03d}.tfrecord") for i in range(N_SHARDS)
    ]
    writers = [tf.io.TFRecordWriter(p) for p in paths]
    for i in range(N_IMAGES):
        label = int(rng.integers(N_CLASSES))
        jpeg = tf.io.encode_jpeg(synth_leaf(rng, label), quality=92).numpy()
        example = tf.train.Example(
            features=tf.train.Features(
                feature={
                    "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[jpeg])),
                    "image/class/label": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=[label])
                    ),
                    "image/height": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=[IMAGE_SIZE])
                    ),
                    "image/width": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=[IMAGE_SIZE])
                    ),
                }
            )
        )
        writers[i % N_SHARDS].write(example.SerializeToString())
    for w in writers:
        w.close()
    return paths


FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/class/label": tf.io.FixedLenFeature([], tf.int64),
    "image/height": tf.io.FixedLenFeature([], tf.int64),
    "image/width": tf.io.FixedLenFeature([], tf.int64),
}


def parse_and_augment(record):
    ex = tf.io.parse_single_example(record, FEATURES)
    img = tf.io.decode_jpeg(ex["image/encoded"], channels=3)
    img = tf.image.resize(img, (RESIZE, RESIZE), method="bicubic", antialias=True)
    img = tf.image.random_crop(img, (CROP, CROP, 3))
    img = tf.image.random_flip_left_right(img)
    img = tf.image.random_flip_up_down(img)
    img = tf.image.random_brightness(img / 255.0, 0.1)
    return img, ex["image/class/label"]


def make_dataset(paths):
    ds = tf.data.TFRecordDataset(paths).repeat()
    return ds.map(parse_and_augment).batch(BATCH_SIZE)


def build_model():
    inp = keras.Input(shape=(CROP, CROP, 3))
    x = keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(inp)
    for filters in (48, 64, 96):
        x = keras.layers.SeparableConv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        durations = [b - a for (e0, a), (e1, b) in zip(self.stamps, self.stamps[1:]) if e0 == e1]
        return float(np.mean(durations[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="u16_input_tfrecord_jpeg_crop_disease_")
    try:
        t0 = time.perf_counter()
        paths = write_shards(root)
        print(
            f"wrote {N_IMAGES} JPEG records to {N_SHARDS} shards in {time.perf_counter() - t0:.1f}s"
        )
        model = build_model()
        timer = StepTimer()
        model.fit(
            make_dataset(paths), epochs=1, steps_per_epoch=STEPS, callbacks=[timer], verbose=0
        )
        full = timer.seconds_per_step()
        print(f"real input: {full * 1000:.1f} ms/step")
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            batch = next(iter(make_dataset(paths)))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(cached, epochs=1, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
            compute = timer2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
