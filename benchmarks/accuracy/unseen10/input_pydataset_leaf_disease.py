"""Plant leaf disease classification with heavy on-the-fly augmentation.

A compact ConvNet learns to tell healthy leaves from rust, blight and mildew on
64x64 RGB photos. The "photos" are synthetic (a green ellipse with coloured lesions)
and kept in memory at 80x80; a ``keras.utils.PyDataset`` subclass builds every batch
in its ``__getitem__`` with numpy augmentation - random crop, flips, 90 degree and
small-angle rotations, colour jitter, gamma, blur and sensor noise - and
``model.fit`` consumes it directly.

Run ``python input_pydataset_leaf_disease.py [--truth]``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

CLASSES = ["healthy", "rust", "blight", "mildew"]
RAW = 80
CROP = 64
BATCH = 32
STEPS = 160


def synth_leaves(n, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:RAW, 0:RAW] / RAW - 0.5
    images = np.zeros((n, RAW, RAW, 3), np.uint8)
    labels = rng.integers(0, len(CLASSES), size=n)
    for i in range(n):
        img = np.full((RAW, RAW, 3), (120, 100, 80), np.float32)
        a, b = rng.uniform(0.25, 0.45), rng.uniform(0.15, 0.3)
        leaf = (xx / a) ** 2 + (yy / b) ** 2 < 1
        img[leaf] = (40, 140 + rng.uniform(-20, 20), 50)
        for _ in range(rng.integers(5, 20) if labels[i] else 0):
            cy, cx = rng.uniform(-0.2, 0.2, size=2)
            spot = (yy - cy) ** 2 + (xx - cx) ** 2 < rng.uniform(0.0005, 0.003)
            colour = [(170, 90, 30), (60, 40, 20), (220, 220, 210)][labels[i] - 1]
            img[spot & leaf] = colour
        images[i] = np.clip(img + rng.normal(0, 6, img.shape), 0, 255)
    return images, labels


class AugmentedLeaves(keras.utils.PyDataset):
    def __init__(self, images, labels, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.images = images
        self.labels = labels
        self.batch_size = batch_size
        self.rng = np.random.default_rng(1)

    def __len__(self):
        return len(self.images) // self.batch_size

    def rotate(self, img, angle):
        """Small-angle rotation with nearest-neighbour sampling."""
        yy, xx = np.mgrid[0:CROP, 0:CROP] - (CROP - 1) / 2
        src_y = np.cos(angle) * yy - np.sin(angle) * xx + (CROP - 1) / 2
        src_x = np.sin(angle) * yy + np.cos(angle) * xx + (CROP - 1) / 2
        src_y = np.clip(np.rint(src_y), 0, CROP - 1).astype(np.int64)
        src_x = np.clip(np.rint(src_x), 0, CROP - 1).astype(np.int64)
        return img[src_y, src_x]

    def augment(self, img):
        top, left = self.rng.integers(0, RAW - CROP + 1, size=2)
        img = img[top : top + CROP, left : left + CROP].astype(np.float32) / 255.0
        if self.rng.random() < 0.5:
            img = img[:, ::-1]
        if self.rng.random() < 0.5:
            img = img[::-1]
        img = np.rot90(img, k=self.rng.integers(0, 4))
        img = self.rotate(img, self.rng.uniform(-0.4, 0.4))
        img = img * self.rng.uniform(0.8, 1.2, size=3) + self.rng.uniform(-0.1, 0.1)
        img = np.clip(img, 0, 1) ** self.rng.uniform(0.7, 1.4)
        blurred = (
            img
            + np.roll(img, 1, 0)
            + np.roll(img, -1, 0)
            + np.roll(img, 1, 1)
            + np.roll(img, -1, 1)
        ) / 5
        img = np.where(self.rng.random() < 0.3, blurred, img)
        img = img + self.rng.normal(0, 0.03, size=img.shape)
        return (img - 0.5) / 0.25

    def __getitem__(self, idx):
        sl = slice(idx * self.batch_size, (idx + 1) * self.batch_size)
        x = np.stack([self.augment(im) for im in self.images[sl]]).astype(np.float32)
        return x, self.labels[sl]


def build_model():
    model = keras.Sequential(
        [
            keras.Input((CROP, CROP, 3)),
            keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
            keras.layers.BatchNormalization(),
            keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(len(CLASSES), activation="softmax"),
        ]
    )
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class Stopwatch(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.batch_ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.batch_ends.append(time.perf_counter())


def timed_fit(data):
    watch = Stopwatch()
    build_model().fit(data, epochs=1, steps_per_epoch=STEPS, callbacks=[watch], verbose=2)
    ends = watch.batch_ends
    return (ends[-1] - ends[4]) / (len(ends) - 5)


def log_json(record):
    if os.environ.get("ACCURACY_OUT"):
        with open(os.environ["ACCURACY_OUT"], "a") as f:
            print(json.dumps(record), file=f)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    images, labels = synth_leaves(STEPS * BATCH)
    leaves = AugmentedLeaves(images, labels, BATCH)
    full = timed_fit(leaves)
    log_json({"steps_per_second": 1 / full})
    text = f"leaf disease: {1 / full:.2f} steps/s, {full * 1000:.1f} ms/step"
    if args.truth:
        x, y = leaves[0]
        compute = timed_fit(tf.data.Dataset.from_tensors((x, y)).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        log_json({"truth_input_fraction": frac})
        text += f", compute only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(text)


if __name__ == "__main__":
    main()
