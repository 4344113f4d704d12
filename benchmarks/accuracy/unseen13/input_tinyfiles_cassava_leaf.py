"""Cassava leaf disease classifier trained from a folder of small PNG crops."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
from PIL import Image

import keras
import tensorflow as tf

CLASSES = ["healthy", "mosaic", "brown_streak", "bacterial_blight", "green_mottle"]
N_IMAGES = 2000
IMAGE_SIZE = 128
CROP_SIZE = 112
INPUT_SIZE = 64
BATCH_SIZE = 32
STEPS_PER_EPOCH = 40
EPOCHS = 3
SEED = 3


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
def write_leaf_images(root, n_images, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE] / IMAGE_SIZE
    for name in CLASSES:
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for i in range(n_images):
        label = int(rng.integers(0, len(CLASSES)))
        img = np.zeros((IMAGE_SIZE, IMAGE_SIZE, 3))
        img[..., 1] = 0.45 + 0.2 * np.sin(6 * xx + rng.uniform(0, 3))
        img[..., 0] = 0.15 + 0.1 * label * (np.sin(12 * yy * (label + 1)) > 0.5)
        img[..., 2] = 0.1
        img += rng.normal(0, 0.05, img.shape)
        pixels = (np.clip(img, 0, 1) * 255).astype("uint8")
        Image.fromarray(pixels).save(
            os.path.join(root, CLASSES[label], f"leaf_{i:05d}.png"), compress_level=1
        )


def load_example(path):
    raw = tf.io.read_file(path)
    image = tf.io.decode_png(raw, channels=3)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_crop(image, (CROP_SIZE, CROP_SIZE, 3))
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, 0.1)
    image = tf.image.random_contrast(image, 0.8, 1.2)
    image = tf.image.random_saturation(image, 0.8, 1.2)
    image = tf.image.random_hue(image, 0.03)
    image = tf.image.resize(image, (INPUT_SIZE, INPUT_SIZE), antialias=True)
    image = (image - 0.5) / 0.25
    folder = tf.strings.split(path, os.sep)[-2]
    label = tf.argmax(tf.cast(tf.equal(folder, CLASSES), tf.int32))
    return image, label


def make_dataset(root):
    files = tf.data.Dataset.list_files(os.path.join(root, "*", "*.png"), shuffle=True, seed=SEED)
    return files.map(load_example).batch(BATCH_SIZE).repeat()


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(INPUT_SIZE, INPUT_SIZE, 3))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(len(CLASSES), activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="leaf_cnn")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(dataset, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="u13_cassava_")
    try:
        t0 = time.perf_counter()
        write_leaf_images(root, N_IMAGES, SEED)
        print(f"wrote {N_IMAGES} images in {time.perf_counter() - t0:.1f}s")

        sec = train(make_dataset(root))
        append_result(steps_per_second=1.0 / sec)
        summary = f"cassava: {sec * 1000:.1f} ms/step"

        if args.truth:
            batch = next(iter(make_dataset(root)))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((sec - compute) / sec, 0.0), 1.0)
            append_result(truth_input_fraction=frac)
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
