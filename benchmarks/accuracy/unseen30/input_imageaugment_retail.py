"""Shelf-product recognition for a retail planogram checker.

Product crops are held in memory as uint8 arrays.  Every example goes through
a heavy native tf.image augmentation map (upscale, random rotation through the
ImageProjectiveTransformV3 op, colour jitter, random crop, flip) that runs with
no num_parallel_calls and no prefetch before model.fit.
"""
import argparse
import json
import math
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_IMAGES = 1200
SRC = 96
UP = 160
CROP = 128
BATCH = 32
STEPS_PER_EPOCH = 60
EPOCHS = 3
N_CLASSES = 12


def make_images(rng):
    labels = rng.integers(0, N_CLASSES, size=N_IMAGES).astype(np.int32)
    yy, xx = np.mgrid[0:SRC, 0:SRC]
    imgs = np.empty((N_IMAGES, SRC, SRC, 3), dtype=np.uint8)
    for i, c in enumerate(labels):
        colour = np.array([(c * 37) % 255, (c * 91) % 255, (c * 53) % 255], dtype=np.float32)
        box = ((np.abs(xx - 48) < 20 + c) & (np.abs(yy - 48) < 30 - c)).astype(np.float32)
        img = box[..., None] * colour + rng.normal(0, 20, size=(SRC, SRC, 3)) + 40
        imgs[i] = np.clip(img, 0, 255).astype(np.uint8)
    return imgs, labels


def rotate(image, angle):
    c, s = tf.cos(angle), tf.sin(angle)
    cx = cy = UP / 2.0
    transform = tf.stack([c, -s, cx - c * cx + s * cy,
                          s, c, cy - s * cx - c * cy, 0.0, 0.0])
    out = tf.raw_ops.ImageProjectiveTransformV3(
        images=image[None], transforms=transform[None],
        output_shape=tf.constant([UP, UP]), fill_value=0.0,
        interpolation="BILINEAR", fill_mode="REFLECT")
    return out[0]


def augment(image, label):
    x = tf.image.convert_image_dtype(image, tf.float32)
    x = tf.image.resize(x, (UP, UP), method="bicubic")
    x = rotate(x, tf.random.uniform((), -math.pi / 8, math.pi / 8))
    x = tf.image.random_brightness(x, 0.2)
    x = tf.image.random_contrast(x, 0.7, 1.3)
    x = tf.image.random_saturation(x, 0.6, 1.4)
    x = tf.image.random_hue(x, 0.05)
    x = tf.image.random_crop(x, (CROP, CROP, 3))
    x = tf.image.random_flip_left_right(x)
    x = tf.clip_by_value(x, 0.0, 1.0)
    return x, label


def make_dataset(imgs, labels):
    ds = tf.data.Dataset.from_tensor_slices((imgs, labels)).shuffle(N_IMAGES, seed=0).repeat()
    return ds.map(augment).batch(BATCH)


def build_model():
    inp = keras.Input((CROP, CROP, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, strides=2, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
                     callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    imgs, labels = make_images(np.random.default_rng(0))
    full, loss = train(make_dataset(imgs, labels))
    emit({"steps_per_second": 1.0 / full})
    msg = f"retail: {EPOCHS}x{STEPS_PER_EPOCH} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}"
    if args.truth:
        batch = next(iter(make_dataset(imgs, labels)))
        compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
