"""Crop-type classification from satellite image tiles stored as PNG files."""

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

TILE = 64
N_TRAIN = 2400
N_VAL = 400
N_CLASSES = 6
BATCH_SIZE = 32
STEPS_PER_EPOCH = 80
VAL_STEPS = 8
EPOCHS = 3


def write_tiles(root, n, rng):
    paths, labels = [], []
    os.makedirs(root, exist_ok=True)
    yy, xx = np.mgrid[0:TILE, 0:TILE]
    for i in range(n):
        label = int(rng.integers(N_CLASSES))
        freq = 0.05 + 0.04 * label
        base = 0.5 + 0.5 * np.sin(freq * (xx + rng.integers(TILE)) + 0.3 * label * yy)
        img = np.stack([base * (0.4 + 0.1 * c) for c in range(3)], axis=-1)
        img = img + 0.15 * rng.standard_normal((TILE, TILE, 3))
        img = (np.clip(img, 0, 1) * 255).astype("uint8")
        path = os.path.join(root, f"tile_{i:05d}_c{label}.png")
        Image.fromarray(img).save(path)
        paths.append(path)
        labels.append(label)
    return paths, np.asarray(labels, dtype="int32")


def tile_generator(paths, labels, batch_size, augment, seed):
    rng = np.random.default_rng(seed)
    n = len(paths)
    while True:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            xs = []
            for j in order[start : start + batch_size]:
                with Image.open(paths[j]) as im:
                    im = im.convert("RGB")
                    if augment and rng.random() < 0.5:
                        im = im.transpose(Image.FLIP_LEFT_RIGHT)
                    if augment:
                        im = im.rotate(float(rng.choice([0, 90, 180, 270])))
                    arr = np.asarray(im, dtype="float32") / 255.0
                arr = (arr - arr.mean(axis=(0, 1))) / (arr.std(axis=(0, 1)) + 1e-6)
                xs.append(arr)
            yield np.stack(xs), labels[order[start : start + batch_size]]


def build_model():
    inputs = keras.Input(shape=(TILE, TILE, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u20_input_pngdisk_satellite_")
    try:
        rng = np.random.default_rng(3)
        train_paths, train_labels = write_tiles(os.path.join(workdir, "train"), N_TRAIN, rng)
        val_paths, val_labels = write_tiles(os.path.join(workdir, "val"), N_VAL, rng)
        print(f"wrote {len(train_paths)} train and {len(val_paths)} val tiles")

        train_gen = tile_generator(train_paths, train_labels, BATCH_SIZE, True, 0)
        val_gen = tile_generator(val_paths, val_labels, BATCH_SIZE, False, 1)
        model = build_model()
        timer = StepTimer()
        model.fit(
            train_gen,
            steps_per_epoch=STEPS_PER_EPOCH,
            epochs=EPOCHS,
            validation_data=val_gen,
            validation_steps=VAL_STEPS,
            callbacks=[timer],
            verbose=2,
        )
        full = timer.seconds_per_step()
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

        if args.truth:
            xb, yb = next(tile_generator(train_paths, train_labels, BATCH_SIZE, True, 0))
            cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            val_gen2 = tile_generator(val_paths, val_labels, BATCH_SIZE, False, 1)
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(
                cached,
                steps_per_epoch=STEPS_PER_EPOCH,
                epochs=EPOCHS,
                validation_data=val_gen2,
                validation_steps=VAL_STEPS,
                callbacks=[timer2],
                verbose=2,
            )
            compute = timer2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_out({"truth_input_fraction": frac})
            summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
