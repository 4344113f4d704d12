"""Herbarium sheet family classifier trained from a folder of JPEG scans."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers
from PIL import Image

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--train-images", type=int, default=1600)
parser.add_argument("--val-images", type=int, default=256)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

SCAN = 320
INPUT = 96
NUM_FAMILIES = 8


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_scans(folder, n, seed):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SCAN, 0:SCAN]
    templates = []
    for family in range(NUM_FAMILIES):
        img = np.empty((SCAN, SCAN, 3), np.float32)
        img[..., 0] = 200 + 40 * np.sin(xx / (6 + family))
        img[..., 1] = 180 + 60 * np.cos(yy / (9 + family))
        img[..., 2] = 150 + 30 * np.sin((xx + yy) / 15.0)
        templates.append(img.astype(np.int16))
    for i in range(n):
        family = int(rng.integers(NUM_FAMILIES))
        shift = rng.integers(0, 40, 2)
        img = np.roll(templates[family], tuple(shift), axis=(0, 1))
        img = img + rng.integers(-20, 20, img.shape, dtype=np.int16)
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(
            os.path.join(folder, f"fam{family}_{i:05d}.jpg"), quality=92
        )


def parse_label(path):
    name = tf.strings.split(path, os.sep)[-1]
    return tf.strings.to_number(tf.strings.substr(name, 3, 1), tf.int32)


def load_train(path):
    img = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    img = tf.image.resize(img, [INPUT + 16, INPUT + 16], antialias=True)
    img = tf.image.random_crop(img, [INPUT, INPUT, 3])
    img = tf.image.random_flip_left_right(img)
    img = tf.image.random_flip_up_down(img)
    return img / 255.0, parse_label(path)


def load_val(path):
    img = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    img = tf.image.resize(img, [INPUT, INPUT], antialias=True)
    return img / 255.0, parse_label(path)


def build_model():
    inputs = keras.Input((INPUT, INPUT, 3))
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inputs)
    x = layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(48, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(NUM_FAMILIES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(train_data, val_data, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(
        train_data,
        validation_data=val_data,
        epochs=args.epochs,
        steps_per_epoch=steps,
        callbacks=[timer],
        verbose=2,
    )
    return timer.seconds_per_step()


workdir = tempfile.mkdtemp(prefix="u21_input_jpeg_herbarium_")
try:
    write_scans(os.path.join(workdir, "train"), args.train_images, 1)
    write_scans(os.path.join(workdir, "val"), args.val_images, 2)
    train_ds = (
        tf.data.Dataset.list_files(os.path.join(workdir, "train", "*.jpg"), shuffle=True)
        .map(load_train)
        .batch(args.batch_size, drop_remainder=True)
        .prefetch(1)
    )
    val_ds = (
        tf.data.Dataset.list_files(os.path.join(workdir, "val", "*.jpg"), shuffle=False)
        .map(load_val)
        .batch(args.batch_size)
        .prefetch(1)
    )
    steps_per_epoch = args.train_images // args.batch_size

    full = train(train_ds, val_ds)
    print(f"jpeg folder: {full * 1000:.1f} ms/step")
    report("steps_per_second", 1.0 / full)

    if args.truth:
        fixed_batch = next(iter(train_ds))
        fixed = tf.data.Dataset.from_tensors(fixed_batch).repeat()
        compute = train(fixed, val_ds, steps=steps_per_epoch)
        frac = min(1.0, max(0.0, (full - compute) / full))
        report("truth_input_fraction", frac)
        print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")
    print(f"done: {args.epochs} epochs x {steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
