"""Land-cover classification of satellite image tiles.

Tiles are held in memory; every tile is rotated, zoomed and contrast-jittered
with Keras preprocessing layers inside the tf.data pipeline before a CNN
classifies it into one of ten land-cover classes.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_TILES = 3000
TILE = 96
N_CLASSES = 10
BATCH_SIZE = 32
STEPS = 150
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(42)

# ---------------------------------------------------------------- data
labels = rng.integers(0, N_CLASSES, size=N_TILES).astype(np.int32)
yy, xx = np.mgrid[0:TILE, 0:TILE] / TILE
tiles = np.empty((N_TILES, TILE, TILE, 3), dtype=np.float32)
for i in range(N_TILES):
    k = labels[i]
    pattern = np.sin(2 * np.pi * (k + 1) * (xx * np.cos(k) + yy * np.sin(k)))
    tiles[i] = 0.5 + 0.2 * pattern[..., None] * np.array([0.3 + 0.07 * k, 0.6, 1.0 - 0.08 * k])
tiles += rng.normal(0, 0.05, size=tiles.shape).astype(np.float32)

augment = keras.Sequential(
    [
        keras.layers.RandomRotation(0.25, fill_mode="reflect"),
        keras.layers.RandomZoom((-0.2, 0.2), fill_mode="reflect"),
        keras.layers.RandomContrast(0.3),
        keras.layers.RandomFlip("horizontal_and_vertical"),
    ]
)


def augment_tile(image, label):
    return augment(image, training=True), label


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((tiles, labels))
    ds = ds.shuffle(N_TILES, seed=0).repeat()
    ds = ds.map(augment_tile)
    return ds.batch(BATCH_SIZE, drop_remainder=True)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(TILE, TILE, 3))
    x = keras.layers.Rescaling(2.0, offset=-1.0)(inputs)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    for filters in (16, 24, 32):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.3)(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        d = np.concatenate([np.diff(e) for e in self.epochs if len(e) > 1])
        return float(np.mean(d[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds):
    model = build_model()
    clock = StepClock()
    model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


full = train(make_dataset())
write_out({"steps_per_second": 1.0 / full})
summary = f"landcover: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
