"""Tumour / stroma patch classifier for histology slides with scipy-based augmentation."""

import argparse
import json
import os
import time

import numpy as np
from scipy import ndimage

import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

PATCH = 64
NUM_PATCHES = 2000
NUM_CLASSES = 4
BATCH = args.batch_size
STEPS = args.steps
STEPS_PER_EXECUTION = 2

rng = np.random.default_rng(7)
patches = rng.random((NUM_PATCHES, PATCH, PATCH, 3), dtype=np.float32)
patches = ndimage.uniform_filter(patches, size=(1, 5, 5, 1))
labels = rng.integers(0, NUM_CLASSES, NUM_PATCHES).astype(np.int32)


def augment_np(img):
    angle = np.random.uniform(-30, 30)
    out = ndimage.rotate(img, angle, axes=(0, 1), reshape=False, order=3, mode="reflect")
    scale = np.random.uniform(0.9, 1.15)
    out = ndimage.zoom(out, (scale, scale, 1), order=1)
    h = out.shape[0]
    if h >= PATCH:
        o = (h - PATCH) // 2
        out = out[o : o + PATCH, o : o + PATCH]
    else:
        p = PATCH - h
        out = np.pad(out, ((p // 2, p - p // 2), (p // 2, p - p // 2), (0, 0)), mode="reflect")
    return out.astype(np.float32)


def augment(img, label):
    img = tf.numpy_function(augment_np, [img], tf.float32)
    img.set_shape((PATCH, PATCH, 3))
    return img, label


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((patches, labels))
    ds = ds.shuffle(NUM_PATCHES).repeat()
    ds = ds.map(augment)
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((PATCH, PATCH, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(NUM_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    return model


class StepTimer(keras.callbacks.Callback):
    """Callbacks fire once per execution, i.e. every STEPS_PER_EXECUTION steps."""

    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append((now - self.last) / STEPS_PER_EXECUTION)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(ds):
    keras.utils.set_random_seed(3)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(make_dataset())
append_out({"steps_per_second": 1.0 / full})
msg = f"histology: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
if args.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
