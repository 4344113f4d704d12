"""Land-cover classification of 12-band satellite tiles, XLA-compiled Keras model."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--tiles", type=int, default=1024)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

CLASSES = ["water", "forest", "cropland", "urban", "grassland", "bare", "wetland", "snow"]
TILE = 32
BANDS = 12


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((int(self.model.optimizer.iterations.numpy()), time.perf_counter()))

    def seconds_per_step(self, skip=5):
        marks = [m for m in self.marks if m[0] >= skip]
        return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


rng = np.random.default_rng(0)
y_train = rng.integers(0, len(CLASSES), args.tiles).astype(np.int32)
x_train = rng.normal(size=(args.tiles, TILE, TILE, BANDS)).astype(np.float32)
x_train += (y_train[:, None, None, None] / len(CLASSES)).astype(np.float32)


def build_model():
    inputs = keras.Input(shape=(TILE, TILE, BANDS))
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(len(CLASSES))(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=True,
    )
    return model


clock = StepClock()
model = build_model()
model.fit(
    x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, callbacks=[clock], verbose=2
)
sec_full = clock.seconds_per_step()
report("steps_per_second", 1.0 / sec_full)
print(f"landcover: {sec_full * 1000:.1f} ms/step")

if args.truth:
    batch = (x_train[: args.batch_size], y_train[: args.batch_size])
    steps = args.tiles // args.batch_size
    clock2 = StepClock()
    model2 = build_model()
    model2.fit(
        tf.data.Dataset.from_tensors(batch).repeat(),
        epochs=args.epochs,
        steps_per_epoch=steps,
        callbacks=[clock2],
        verbose=0,
    )
    sec_cached = clock2.seconds_per_step()
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
    )
