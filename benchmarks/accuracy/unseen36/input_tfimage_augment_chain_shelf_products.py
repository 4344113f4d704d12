"""Supermarket shelf product recogniser with a chained tf.image augmentation map.

Product photos (uint8, 128x128) are held in memory.  A serial tf.data map
applies the usual chain: random crop after padding, left/right flip,
random hue, saturation, brightness, contrast and random JPEG quality
(re-encoding artefacts as in the store cameras), then resizes to 112x112.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SIZE = 128
OUT = 112
CLASSES = 20
N_IMAGES = 1500
BATCH = 32
STEPS_PER_EPOCH = 120
EPOCHS = 3
FILTERS = 8


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self):
        gaps = [g for ts in self.epochs for g in np.diff(ts)]
        return float(np.mean(gaps[4:]))  # steps 5 onward


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_products(rng):
    labels = rng.integers(CLASSES, size=N_IMAGES)
    palette = rng.integers(40, 230, size=(CLASSES, 3))
    images = rng.normal(128, 20, (N_IMAGES, SIZE, SIZE, 3))
    for i in range(N_IMAGES):
        y0, x0 = rng.integers(10, 40, 2)
        h, w = rng.integers(60, 85, 2)
        images[i, y0:y0 + h, x0:x0 + w] = palette[labels[i]] + rng.normal(0, 10, (h, w, 3))
        images[i, y0 + h // 3:y0 + h // 3 + 8, x0:x0 + w] = 250  # label stripe
    return images.clip(0, 255).astype(np.uint8), labels.astype(np.int32)


def augment(image, label):
    image = tf.image.resize_with_crop_or_pad(image, SIZE + 16, SIZE + 16)
    image = tf.image.random_crop(image, [SIZE, SIZE, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_jpeg_quality(image, 40, 95)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_hue(image, 0.08)
    image = tf.image.random_saturation(image, 0.6, 1.4)
    image = tf.image.random_brightness(image, 0.15)
    image = tf.image.random_contrast(image, 0.7, 1.3)
    image = tf.image.resize(image, [OUT, OUT])
    return tf.clip_by_value(image, 0.0, 1.0), label


def build_model():
    keras.utils.set_random_seed(21)
    model = keras.Sequential([
        keras.Input((OUT, OUT, 3)),
        keras.layers.Conv2D(FILTERS, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(FILTERS * 2, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(FILTERS * 4, 3, strides=2, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(CLASSES, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(ds):
    model = build_model()
    clock = StepClock()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock], verbose=0)
    return clock.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    images, labels = make_products(np.random.default_rng(0))
    ds = (tf.data.Dataset.from_tensor_slices((images, labels))
          .shuffle(N_IMAGES, seed=0)
          .repeat()
          .map(augment)
          .batch(BATCH, drop_remainder=True))
    t0 = time.perf_counter()
    full = train(ds)
    report(steps_per_second=1.0 / full)
    msg = f"shelf products: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
