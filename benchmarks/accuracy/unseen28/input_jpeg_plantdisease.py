"""Leaf-disease classifier trained from field photos stored as JPEG files.

Photos are written to a scratch folder at start-up (standing in for the
field-survey export), then loaded, cropped and flipped by a Python generator.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras
from PIL import Image

N_PHOTOS = 300
PHOTO_W, PHOTO_H = 512, 384
CROP = 352
SIZE = 96
N_CLASSES = 5
BATCH = 32
STEPS = 60
LR = 1e-3


def write_photos(folder, seed=0):
    rng = np.random.default_rng(seed)
    paths, labels = [], []
    yy, xx = np.mgrid[0:PHOTO_H, 0:PHOTO_W]
    for i in range(N_PHOTOS):
        label = int(rng.integers(0, N_CLASSES)) if i % 3 else 0
        green = 120 + 40 * np.sin(xx / (15 + 5 * label) + rng.random() * 6)
        spots = 60 * (np.sin(yy / (7 + label)) * np.cos(xx / 9) > 0.6)
        img = np.stack([spots + 40, green, 50 + 0 * xx], axis=-1)
        img = img + rng.normal(scale=12, size=img.shape)
        path = os.path.join(folder, f"leaf_{i:05d}.jpg")
        Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(path, quality=92)
        paths.append(path)
        labels.append(label)
    return paths, np.array(labels, dtype=np.int32)


def photo_batches(paths, labels, batch_size):
    rng = np.random.default_rng(1)
    while True:
        idx = rng.choice(len(paths), size=batch_size, replace=False)
        xs = np.empty((batch_size, SIZE, SIZE, 3), dtype=np.float32)
        for j, i in enumerate(idx):
            with Image.open(paths[i]) as im:
                im = im.convert("RGB")
                left = int(rng.integers(0, PHOTO_W - CROP))
                top = int(rng.integers(0, PHOTO_H - CROP))
                im = im.crop((left, top, left + CROP, top + CROP)).resize((SIZE, SIZE))
                if rng.random() < 0.5:
                    im = im.transpose(Image.FLIP_LEFT_RIGHT)
                xs[j] = np.asarray(im, dtype=np.float32) / 255.0
        yield xs, labels[idx]


def build_model():
    inp = keras.Input((SIZE, SIZE, 3))
    x = inp
    for filters in (24, 48, 64):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        gaps = np.concatenate([np.diff(s) for s in self.stamps if len(s) > 1])
        return float(np.mean(gaps[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u28_input_jpeg_plantdisease_")
    try:
        paths, labels = write_photos(workdir)
        counts = np.bincount(labels, minlength=N_CLASSES)
        class_weight = {
            c: float(len(labels) / (N_CLASSES * max(n, 1))) for c, n in enumerate(counts)
        }
        print("class counts:", counts.tolist())

        model = build_model()
        timer = StepTimer()
        # Keras refuses class_weight with a bare Python generator, so wrap it
        photos = tf.data.Dataset.from_generator(
            lambda: photo_batches(paths, labels, BATCH),
            output_signature=(
                tf.TensorSpec((BATCH, SIZE, SIZE, 3), tf.float32),
                tf.TensorSpec((BATCH,), tf.int32),
            ),
        )
        model.fit(
            photos,
            steps_per_epoch=STEPS,
            epochs=1,
            class_weight=class_weight,
            callbacks=[timer],
            verbose=2,
        )
        full = timer.seconds_per_step()
        write_out({"steps_per_second": 1.0 / full})
        summary = f"plant disease: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

        if args.truth:
            xb, yb = next(photo_batches(paths, labels, BATCH))
            fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(
                fixed,
                steps_per_epoch=STEPS,
                epochs=1,
                class_weight=class_weight,
                callbacks=[timer2],
                verbose=2,
            )
            compute = timer2.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
