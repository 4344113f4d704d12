"""Chest X-ray style pneumonia screening with a small DenseNet-like ConvNet.

Synthetic 64x64 grayscale "radiographs" (rib-cage shading plus, for positives, a
diffuse opacity in one lung field) are generated once into numpy arrays. The
training data is an in-memory ``tf.data`` pipeline (``from_tensor_slices`` ->
``cache`` -> ``shuffle`` -> ``batch`` -> ``prefetch``), so input costs nothing and
each ``model.fit`` step is dominated by convolution math.

Run ``python compute_fit_xray_densenet.py [--truth]``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

SIZE = 64
N_IMAGES = 1024
BATCH = 32
STEPS = 120


def make_radiographs(n, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    ribs = 0.15 * np.sin(yy * 40) * (np.abs(xx - 0.5) > 0.08)
    base = np.exp(-(((xx - 0.5) / 0.35) ** 2) - ((yy - 0.5) / 0.45) ** 2) + ribs
    labels = rng.integers(0, 2, size=n)
    images = np.empty((n, SIZE, SIZE, 1), np.float32)
    for i in range(n):
        img = base + rng.normal(0, 0.05, size=base.shape)
        if labels[i]:
            cx = rng.choice([0.3, 0.7]) + rng.normal(0, 0.05)
            cy = rng.uniform(0.4, 0.7)
            img += 0.4 * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 0.01)
        images[i, ..., 0] = img
    return images, labels.astype(np.float32)


def dense_block(x, layers, growth):
    for _ in range(layers):
        y = keras.layers.BatchNormalization()(x)
        y = keras.layers.ReLU()(y)
        y = keras.layers.Conv2D(growth, 3, padding="same", use_bias=False)(y)
        x = keras.layers.Concatenate()([x, y])
    return x


def build_model():
    inputs = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(32, 5, strides=2, padding="same")(inputs)
    for layers in (3, 3, 3):
        x = dense_block(x, layers, growth=16)
        x = keras.layers.Conv2D(64, 1)(x)
        x = keras.layers.AveragePooling2D(2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs, name="tiny_densenet")
    model.compile(
        optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
    )
    return model


class TimeHistory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def fit_timed(dataset):
    history = TimeHistory()
    build_model().fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[history], verbose=0)
    t = history.times
    return (t[-1] - t[4]) / (len(t) - 5)


def record(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


if __name__ == "__main__":
    cli = argparse.ArgumentParser()
    cli.add_argument("--truth", action="store_true")
    opts = cli.parse_args()

    images, labels = make_radiographs(N_IMAGES)
    train_ds = (
        tf.data.Dataset.from_tensor_slices((images, labels))
        .cache()
        .shuffle(N_IMAGES)
        .repeat()
        .batch(BATCH)
        .prefetch(tf.data.AUTOTUNE)
    )
    full = fit_timed(train_ds)
    record({"steps_per_second": 1 / full})
    line = f"xray densenet: {1 / full:.2f} steps/s ({full * 1e3:.0f} ms/step)"
    if opts.truth:
        batch = next(iter(train_ds))
        compute = fit_timed(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        record({"truth_input_fraction": frac})
        line += f", compute-only {compute * 1e3:.0f} ms/step, input fraction {frac:.3f}"
    print(line)
