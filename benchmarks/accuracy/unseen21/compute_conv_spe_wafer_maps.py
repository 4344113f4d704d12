"""Semiconductor wafer-map defect pattern classifier (in-memory NumPy arrays)."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

MAP = 48
NUM_PATTERNS = 9
N_WAFERS = 4096
SPE = 16


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Records wall time per optimizer step (callbacks fire once per execution)."""

    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            last_t, last_b = self._last
            self.durations.extend([(now - last_t) / (batch - last_b)] * (batch - last_b))
        self._last = (now, batch)

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


rng = np.random.default_rng(21)
yy, xx = np.mgrid[-1 : 1 : MAP * 1j, -1 : 1 : MAP * 1j]
radius = np.sqrt(xx**2 + yy**2)
labels = rng.integers(0, NUM_PATTERNS, N_WAFERS).astype(np.int32)
wafers = (rng.random((N_WAFERS, MAP, MAP)) < 0.05).astype(np.float32)
for k in range(NUM_PATTERNS):
    ring = (np.abs(radius - k / NUM_PATTERNS) < 0.06).astype(np.float32)
    wafers[labels == k] = np.maximum(wafers[labels == k], ring)
wafers = (wafers * (radius <= 1.0))[..., None]


def build_model():
    model = keras.Sequential(
        [
            keras.Input((MAP, MAP, 1)),
            layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(64, 3, padding="same", activation="relu"),
            layers.Conv2D(64, 3, padding="same", activation="relu"),
            layers.GlobalAveragePooling2D(),
            layers.Dense(128, activation="relu"),
            layers.Dense(NUM_PATTERNS, activation="softmax"),
        ]
    )
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=SPE,
    )
    return model


steps_per_epoch = 128
timer = StepTimer()
model = build_model()
model.fit(
    wafers,
    labels,
    batch_size=args.batch_size,
    epochs=args.epochs,
    steps_per_epoch=steps_per_epoch // 2,
    callbacks=[timer],
    verbose=2,
)
full = timer.seconds_per_step()
print(f"numpy input: {full * 1000:.1f} ms/step")
report("steps_per_second", 1.0 / full)

if args.truth:
    fixed = tf.data.Dataset.from_tensors(
        (wafers[: args.batch_size], labels[: args.batch_size])
    ).repeat()
    timer2 = StepTimer()
    build_model().fit(
        fixed,
        epochs=args.epochs,
        steps_per_epoch=steps_per_epoch // 2,
        callbacks=[timer2],
        verbose=2,
    )
    compute = timer2.seconds_per_step()
    frac = min(1.0, max(0.0, (full - compute) / full))
    report("truth_input_fraction", frac)
    print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")

print(f"done: {args.epochs} epochs, {1.0 / full:.1f} steps/s")
