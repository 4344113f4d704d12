"""Tumour / stroma / normal classification of histopathology patches with a small ResNet."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--patches", type=int, default=2400)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

PATCH = 32
N_CLASSES = 3

rng = np.random.default_rng(2)
labels = rng.integers(0, N_CLASSES, size=args.patches).astype(np.int32)
patches = rng.normal(0.0, 1.0, size=(args.patches, PATCH, PATCH, 3)).astype(np.float32)
patches[..., 0] += labels[:, None, None] * 0.3


def residual_block(x, filters, stride=1):
    shortcut = x
    y = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = keras.layers.BatchNormalization()(y)
    y = keras.layers.ReLU()(y)
    y = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = keras.layers.BatchNormalization()(y)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = keras.layers.BatchNormalization()(shortcut)
    return keras.layers.ReLU()(keras.layers.Add()([y, shortcut]))


def build_model():
    inputs = keras.Input((PATCH, PATCH, 3))
    x = keras.layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    for filters, stride in [(16, 1), (16, 1), (32, 2), (32, 1), (64, 2), (64, 1)]:
        x = residual_block(x, filters, stride)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


steps_per_epoch = args.patches // args.batch_size

model = build_model()
timer = StepTimer()
model.fit(
    patches,
    labels,
    batch_size=args.batch_size,
    epochs=args.epochs,
    shuffle=True,
    callbacks=[timer],
    verbose=2,
)
full = timer.seconds_per_step()
report("steps_per_second", 1.0 / full)
summary = f"histopathology: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

if args.truth:
    batch = (patches[: args.batch_size], labels[: args.batch_size])
    cached = tf.data.Dataset.from_tensors(batch).repeat()
    model = build_model()
    timer = StepTimer()
    model.fit(
        cached, epochs=args.epochs, steps_per_epoch=steps_per_epoch, callbacks=[timer], verbose=2
    )
    compute = timer.seconds_per_step()
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
print(summary)
