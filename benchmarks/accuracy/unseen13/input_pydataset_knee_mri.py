"""Knee MRI slice classifier (normal / meniscus tear / ACL tear) with on-the-fly augmentation."""

import argparse
import json
import os
import time

import numpy as np
from scipy import ndimage

import keras
import tensorflow as tf

SLICE_SIZE = 128
N_CLASSES = 3
BATCH_SIZE = 16
STEPS_PER_EPOCH = 30
EPOCHS = 2
SEED = 21


class StepClock(keras.callbacks.Callback):
    def __init__(self, skip=5):
        super().__init__()
        self.skip = skip
        self.offset = 0
        self.prev = None
        self.total = 0.0
        self.count = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.prev = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        done = self.offset + batch + 1
        if self.prev is not None and self.prev[0] >= self.skip:
            self.total += now - self.prev[1]
            self.count += done - self.prev[0]
        self.prev = (done, now)

    def on_epoch_end(self, epoch, logs=None):
        if self.prev is not None:
            self.offset = self.prev[0]

    def seconds_per_step(self):
        return self.total / max(self.count, 1)


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


# ---------------------------------------------------------------- data
def phantom_slice(rng, label):
    yy, xx = np.mgrid[-1 : 1 : SLICE_SIZE * 1j, -1 : 1 : SLICE_SIZE * 1j]
    img = 0.2 * np.exp(-((xx / 0.8) ** 2 + (yy / 0.9) ** 2))
    img += 0.6 * (((xx + 0.3) / 0.25) ** 2 + ((yy - 0.4) / 0.35) ** 2 < 1)
    img += 0.6 * (((xx + 0.3) / 0.25) ** 2 + ((yy + 0.4) / 0.35) ** 2 < 1)
    img += 0.4 * ((np.abs(yy) < 0.05) & (np.abs(xx) < 0.5))
    if label == 1:
        img -= 0.3 * ((np.abs(yy - rng.uniform(-0.03, 0.03)) < 0.015) & (np.abs(xx) < 0.3))
    if label == 2:
        img -= 0.25 * ((np.abs(xx - yy - 0.1) < 0.04) & (np.abs(yy) < 0.35))
    return img + rng.normal(0, 0.03, img.shape)


def augment(rng, img):
    img = ndimage.rotate(img, rng.uniform(-15, 15), reshape=False, order=3, mode="nearest")
    alpha, sigma = 12.0, 5.0
    dx = ndimage.gaussian_filter(rng.uniform(-1, 1, img.shape), sigma) * alpha
    dy = ndimage.gaussian_filter(rng.uniform(-1, 1, img.shape), sigma) * alpha
    yy, xx = np.meshgrid(np.arange(img.shape[0]), np.arange(img.shape[1]), indexing="ij")
    img = ndimage.map_coordinates(img, [yy + dy, xx + dx], order=3, mode="reflect")
    img = ndimage.gaussian_filter(img, rng.uniform(0.0, 1.0))
    lo, hi = np.percentile(img, [1, 99])
    return np.clip((img - lo) / (hi - lo + 1e-6), 0, 1)


class KneeSlices(keras.utils.PyDataset):
    def __init__(self, n_batches, batch_size, seed, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches
        self.batch_size = batch_size
        self.seed = seed

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        labels = rng.integers(0, N_CLASSES, size=self.batch_size)
        x = np.stack([augment(rng, phantom_slice(rng, int(y))) for y in labels])
        return x[..., None].astype("float32"), labels.astype("int32")


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(SLICE_SIZE, SLICE_SIZE, 1))
    x = inputs
    for filters in (16, 32, 48, 64):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="knee_cnn")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(data):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    sec = train(KneeSlices(STEPS_PER_EPOCH, BATCH_SIZE, SEED))
    append_result(steps_per_second=1.0 / sec)
    summary = f"knee mri: {sec * 1000:.1f} ms/step"

    if args.truth:
        batch = KneeSlices(1, BATCH_SIZE, SEED + 1)[0]
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
