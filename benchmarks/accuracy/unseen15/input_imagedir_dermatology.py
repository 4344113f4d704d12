"""Dermatology lesion classifier trained from a folder of JPEG photos.

Usage: python input_imagedir_dermatology.py [--truth]
"""

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
from keras import layers

CLASSES = ["nevus", "melanoma", "keratosis", "dermatofibroma", "vascular"]
IMAGES_PER_CLASS = 520
FILE_SIZE = 448
IMAGE_SIZE = (64, 64)
BATCH_SIZE = 32
STEPS = 80
SEED = 7


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def write_lesion_images(root, rng):
    yy, xx = np.mgrid[0:FILE_SIZE, 0:FILE_SIZE]
    for ci, name in enumerate(CLASSES):
        folder = os.path.join(root, name)
        os.makedirs(folder)
        tone = np.array([190, 140, 120]) - ci * 12
        templates = []
        for _ in range(8):
            cy, cx = rng.integers(120, FILE_SIZE - 120, size=2)
            r = rng.uniform(40, 120)
            blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))[..., None]
            templates.append((tone - blob * (60 + 10 * ci)).clip(0, 235).astype(np.uint8))
        for i in range(IMAGES_PER_CLASS):
            noise = rng.integers(0, 20, size=(FILE_SIZE, FILE_SIZE, 3), dtype=np.uint8)
            img = templates[i % len(templates)] + noise
            Image.fromarray(img).save(os.path.join(folder, f"{name}_{i:05d}.jpg"), quality=92)


def build_model():
    inputs = keras.Input(shape=IMAGE_SIZE + (3,))
    x = layers.Rescaling(1.0 / 255)(inputs)
    for filters in (16, 32, 64):
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = layers.MaxPooling2D()(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.3)(x)
    outputs = layers.Dense(len(CLASSES), activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="lesion_cnn")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    root = tempfile.mkdtemp(prefix="u15_input_imagedir_dermatology_")
    try:
        t0 = time.perf_counter()
        write_lesion_images(root, rng)
        print(f"wrote {len(CLASSES) * IMAGES_PER_CLASS} images in {time.perf_counter() - t0:.1f}s")

        train_ds = keras.utils.image_dataset_from_directory(
            root,
            labels="inferred",
            label_mode="categorical",
            image_size=IMAGE_SIZE,
            batch_size=BATCH_SIZE,
            shuffle=True,
            seed=SEED,
        )
        full = train(train_ds)
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            batch = next(iter(train_ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute = train(cached)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
