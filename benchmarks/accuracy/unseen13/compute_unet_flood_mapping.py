"""Flood extent segmentation on dual-polarisation SAR tiles with a small U-Net."""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf

TILE = 96
N_TILES = 512
BATCH_SIZE = 8
STEPS_PER_EPOCH = 40
EPOCHS = 2
SEED = 29


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
def make_tiles(seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:TILE, 0:TILE] / TILE
    x = np.empty((N_TILES, TILE, TILE, 2), "float32")
    y = np.empty((N_TILES, TILE, TILE, 1), "float32")
    for i in range(N_TILES):
        cx, cy, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.1, 0.35)
        water = (((xx - cx) ** 2 + (yy - cy) ** 2 + 0.05 * np.sin(20 * xx)) < r**2).astype(
            "float32"
        )
        speckle = rng.gamma(4.0, 0.25, size=(TILE, TILE, 2))
        x[i, ..., 0] = (-8 - 12 * water) + 2 * np.log(speckle[..., 0])
        x[i, ..., 1] = (-15 - 8 * water) + 2 * np.log(speckle[..., 1])
        y[i, ..., 0] = water
    x = (x - x.mean((0, 1, 2))) / x.std((0, 1, 2))
    return x, y


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=SEED)
    return ds.batch(BATCH_SIZE, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
def conv_block(x, filters):
    x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    return keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)


def build_model():
    inputs = keras.Input(shape=(TILE, TILE, 2))
    skips = []
    x = inputs
    for filters in (16, 32, 64):
        x = conv_block(x, filters)
        skips.append(x)
        x = keras.layers.MaxPooling2D()(x)
    x = conv_block(x, 128)
    for filters, skip in zip((64, 32, 16), reversed(skips)):
        x = keras.layers.Conv2DTranspose(filters, 2, strides=2, padding="same")(x)
        x = keras.layers.Concatenate()([x, skip])
        x = conv_block(x, filters)
    outputs = keras.layers.Conv2D(1, 1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs, name="flood_unet")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.BinaryIoU(target_class_ids=[1], name="iou")],
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

    x, y = make_tiles(SEED)
    print(f"tiles {x.shape}, water fraction {y.mean():.3f}")

    sec = train(make_dataset(x, y))
    append_result(steps_per_second=1.0 / sec)
    summary = f"flood unet: {sec * 1000:.1f} ms/step"

    if args.truth:
        batch = (x[:BATCH_SIZE], y[:BATCH_SIZE])
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
