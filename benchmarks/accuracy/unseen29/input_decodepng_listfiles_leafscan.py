"""Plant-disease grading from flatbed leaf scans.

Leaf scans are written as PNG files (one folder per severity grade). The input
pipeline lists them with ``tf.data.Dataset.list_files``, reads and decodes each
with ``tf.io.read_file`` + ``tf.io.decode_png``, resizes, colour-jitters and
crops, all in a sequential ``map`` (no ``num_parallel_calls``).
"""
import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
from PIL import Image
import tensorflow as tf
import keras

SRC = 384
IMG = 96
BATCH = 32
STEPS_PER_EPOCH = 40
EPOCHS = 3
N_IMAGES = 240
GRADES = ["healthy", "mild", "moderate", "severe"]


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def write_scans(folder, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SRC, 0:SRC].astype(np.float32) / SRC
    for g in GRADES:
        os.makedirs(os.path.join(folder, g))
    for i in range(N_IMAGES):
        grade = i % len(GRADES)
        leaf = ((yy - 0.5) ** 2 / 0.16 + (xx - 0.5) ** 2 / 0.08) < 1.0
        img = np.zeros((SRC, SRC, 3), np.float32)
        img[..., 1] = leaf * (0.6 + 0.2 * rng.random((SRC, SRC)))
        img[..., 0] = leaf * 0.1 * rng.random((SRC, SRC))
        for _ in range(grade * 12):
            cy, cx = rng.uniform(0.2, 0.8, 2)
            spot = ((yy - cy) ** 2 + (xx - cx) ** 2) < rng.uniform(0.0003, 0.002)
            img[spot & leaf] = (0.45, 0.3, 0.05)
        img += rng.normal(0, 0.03, img.shape)
        Image.fromarray((np.clip(img, 0, 1) * 255).astype(np.uint8)).save(
            os.path.join(folder, GRADES[grade], f"scan_{i:04d}.png"))


def make_dataset(folder):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant(GRADES), tf.range(len(GRADES))), -1)
    files = tf.data.Dataset.list_files(os.path.join(folder, "*", "*.png"), shuffle=True, seed=0)

    def load(path):
        img = tf.io.decode_png(tf.io.read_file(path), channels=3)
        img = tf.image.convert_image_dtype(img, tf.float32)
        img = tf.image.resize(img, (IMG + 16, IMG + 16), method="bicubic")
        img = tf.image.random_crop(img, (IMG, IMG, 3), seed=1)
        img = tf.image.random_flip_left_right(img, seed=2)
        img = tf.image.random_brightness(img, 0.1, seed=3)
        img = tf.image.random_saturation(img, 0.8, 1.2, seed=4)
        label = table.lookup(tf.strings.split(path, os.sep)[-2])
        return img, label

    return files.repeat().map(load).batch(BATCH).prefetch(2)


def build_model():
    inp = keras.Input((IMG, IMG, 3))
    x = inp
    for f in (24, 48, 96):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(len(GRADES))(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(ds):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="u29_leafscan_")
    try:
        write_scans(folder)
        ds = make_dataset(folder)
        full = train(ds)
        report("steps_per_second", 1.0 / full)
        msg = f"leafscan: {1.0 / full:.2f} steps/s"
        if args.truth:
            batch = next(iter(ds))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
