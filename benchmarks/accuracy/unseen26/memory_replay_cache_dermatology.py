"""Skin-lesion classifier trained from a generator that keeps every batch it served."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

IMG = 128
N_CLASSES = 7
BATCH_SIZE = 48
STEPS_PER_EPOCH = 50
EPOCHS = 3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
class LesionBatches:
    """Generates synthetic dermoscopy-like batches; keeps them so a run can be replayed."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.history = []  # every (x, y) served, for reproducibility
        yy, xx = np.mgrid[:IMG, :IMG]
        self.r = np.hypot(yy - IMG / 2, xx - IMG / 2)

    def make_batch(self):
        y = self.rng.integers(0, N_CLASSES, BATCH_SIZE)
        size = 10 + 3 * y[:, None, None]
        lesion = (self.r[None] < size).astype(np.float32)
        skin = np.array([0.85, 0.65, 0.55], np.float32)
        x = skin + lesion[..., None] * (0.1 * y[:, None, None, None] - 0.5)
        x = x + 0.05 * self.rng.standard_normal((BATCH_SIZE, IMG, IMG, 3))
        return x.astype(np.float32), y.astype(np.int32)

    def __iter__(self):
        return self

    def __next__(self):
        x, y = self.make_batch()
        self.history.append((x, y))
        return x, y

    def flow(self):
        while True:
            yield next(self)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((IMG, IMG, 3))
    x = keras.layers.Conv2D(24, 5, strides=4, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["acc"])
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self):
        return (self.times[-1] - self.times[5]) / (len(self.times) - 6)


def train(data, tag):
    model = build_model()
    timer = StepTimer()
    print(f"[{tag}] training")
    model.fit(data, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


batches = LesionBatches()
full = train(batches.flow(), "lesions")
write_out({"steps_per_second": 1.0 / full})
print(f"cached batches: {len(batches.history)}")

if args.truth:
    xb, yb = LesionBatches(seed=1).make_batch()
    cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    compute = train(cached, "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
