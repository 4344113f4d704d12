"""Crop-type classification from satellite field tiles (Sentinel-style RGB patches)."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--num-tiles", type=int, default=1024)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

TILE = 96
CROP = 80
NUM_CLASSES = 12


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


# ---------------- data ----------------
def load_tiles(n):
    rng = np.random.default_rng(7)
    base = rng.integers(0, 256, size=(n, TILE // 4, TILE // 4, 3), dtype=np.uint8)
    tiles = np.repeat(np.repeat(base, 4, axis=1), 4, axis=2)
    noise = rng.integers(0, 30, size=tiles.shape, dtype=np.uint8)
    tiles = np.clip(tiles.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    labels = rng.integers(0, NUM_CLASSES, size=n).astype(np.int32)
    return tiles, labels


def decode(tile, label):
    tile = tf.image.convert_image_dtype(tile, tf.float32)
    return tile, label


def augment(tile, label):
    tile = tf.image.random_flip_left_right(tile)
    tile = tf.image.random_flip_up_down(tile)
    tile = tf.image.rot90(tile, k=tf.random.uniform([], 0, 4, dtype=tf.int32))
    tile = tf.image.random_brightness(tile, 0.15)
    tile = tf.image.random_contrast(tile, 0.8, 1.2)
    tile = tf.image.random_saturation(tile, 0.8, 1.2)
    tile = tf.image.random_hue(tile, 0.04)
    tile = tf.image.random_jpeg_quality(tile, 60, 100)
    tile = tf.image.random_crop(tile, [CROP, CROP, 3])
    tile = tf.image.resize(tile, [TILE, TILE])
    tile = tf.image.adjust_gamma(tile, tf.random.uniform([], 0.8, 1.2))
    tile = tile + tf.random.normal(tf.shape(tile), stddev=0.02)
    tile = tf.clip_by_value(tile, 0.0, 1.0)
    return tile, label


tiles, labels = load_tiles(args.num_tiles)
train_ds = (
    tf.data.Dataset.from_tensor_slices((tiles, labels))
    .map(decode)
    .cache()
    .shuffle(1024)
    .map(augment)
    .batch(args.batch_size, drop_remainder=True)
)
steps_per_epoch = args.num_tiles // args.batch_size


# ---------------- model ----------------
def build_model():
    inputs = keras.Input((TILE, TILE, 3))
    x = layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(inputs)
    x = layers.Conv2D(48, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(128, activation="relu")(x)
    outputs = layers.Dense(NUM_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(dataset, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(dataset, epochs=args.epochs, steps_per_epoch=steps, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


full = train(train_ds)
print(f"real input: {full * 1000:.1f} ms/step")
report("steps_per_second", 1.0 / full)

if args.truth:
    fixed_batch = next(iter(train_ds))
    fixed_ds = tf.data.Dataset.from_tensors(fixed_batch).repeat()
    compute = train(fixed_ds, steps=steps_per_epoch)
    frac = min(1.0, max(0.0, (full - compute) / full))
    report("truth_input_fraction", frac)
    print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")

print(f"done: {args.epochs} epochs x {steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
