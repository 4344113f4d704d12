"""Segmenting plant roots in rhizotron images with a compact U-Net."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_IMAGES = 512
SIZE = 96
BATCH_SIZE = 8
STEPS = 50


def make_images(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    images = rng.normal(0.45, 0.08, size=(N_IMAGES, SIZE, SIZE, 3)).astype(np.float32)
    masks = np.zeros((N_IMAGES, SIZE, SIZE, 1), dtype=np.float32)
    for i in range(N_IMAGES):
        for _ in range(3):
            x0, slope, width = (
                rng.uniform(10, SIZE - 10),
                rng.uniform(-0.4, 0.4),
                rng.uniform(1.5, 4),
            )
            root = np.abs(xx - (x0 + slope * yy)) < width
            masks[i, root, 0] = 1.0
            images[i, root] += np.array([0.35, 0.3, 0.2], dtype=np.float32)
    return images, masks


def conv_block(x, filters):
    x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    return keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)


def build_model():
    inp = keras.Input(shape=(SIZE, SIZE, 3))
    skips, x = [], inp
    for filters in (16, 32, 64):
        x = conv_block(x, filters)
        skips.append(x)
        x = keras.layers.MaxPooling2D(2)(x)
    x = conv_block(x, 128)
    for filters, skip in zip((64, 32, 16), reversed(skips)):
        x = keras.layers.Conv2DTranspose(filters, 2, strides=2, padding="same")(x)
        x = conv_block(keras.layers.Concatenate()([x, skip]), filters)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["binary_accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._last is None:
            self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=2)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(8)
    images, masks = make_images(rng)
    ds = (
        tf.data.Dataset.from_tensor_slices((images, masks))
        .shuffle(N_IMAGES, seed=0)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )

    sec, loss = train(ds)
    print(f"real input: {sec * 1000:.1f} ms/step, loss {loss:.4f}")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
    if args.truth:
        batch = next(iter(ds))
        csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (sec - csec) / sec))
        print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
