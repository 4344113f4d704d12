"""CIFAR-sized CNN trained with model.fit on in-memory data.

The arrays are batched once into a cached, repeated, prefetched tf.data
pipeline, so the input side costs almost nothing per step.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf
from keras import layers

BATCH = 64
EPOCHS = 2
N_TRAIN = 4096


def synthetic_cifar(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n)
    x = rng.normal(0.0, 0.3, size=(n, 32, 32, 3)).astype(np.float32)
    # class-dependent colour blobs so the net has something to learn
    for c in range(10):
        idx = y == c
        x[idx, (c * 3) % 24 : (c * 3) % 24 + 8, :, c % 3] += 1.0
    return x, y.astype(np.int64)


def conv_block(x, filters):
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.Activation("relu")(x)


def build():
    inp = keras.Input((32, 32, 3))
    x = conv_block(inp, 32)
    x = layers.MaxPooling2D()(x)
    x = conv_block(x, 64)
    x = layers.MaxPooling2D()(x)
    x = conv_block(x, 96)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.3)(x)
    out = layers.Dense(10, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


class BatchTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.dt = []

    def on_epoch_begin(self, epoch, logs=None):
        self.prev = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.dt.append(now - self.prev)
        self.prev = now


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    args = p.parse_args()

    x_train, y_train = synthetic_cifar(N_TRAIN, 0)
    x_val, y_val = synthetic_cifar(512, 1)
    model = build()
    model.summary()

    bt = BatchTimes()
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x_train, y_train))
        .batch(BATCH, drop_remainder=True)
        .cache()
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )
    model.fit(
        train_ds,
        steps_per_epoch=N_TRAIN // BATCH,
        epochs=EPOCHS,
        validation_data=(x_val, y_val),
        callbacks=[bt],
        verbose=2,
    )
    steady = bt.dt[5:]
    full = float(np.mean(steady))
    sps = len(steady) / float(np.sum(steady))
    print(f"{sps:.2f} steps/s")
    write_out({"steps_per_second": sps})

    if args.truth:
        batch = (tf.constant(x_train[:BATCH]), tf.constant(y_train[:BATCH]))
        ds = tf.data.Dataset.from_tensors(batch).repeat()
        bt2 = BatchTimes()
        model.fit(ds, steps_per_epoch=N_TRAIN // BATCH, epochs=EPOCHS, callbacks=[bt2], verbose=0)
        compute = float(np.mean(bt2.dt[5:]))
        frac = min(1.0, max(0.0, (full - compute) / full))
        print(
            f"truth input fraction {frac:.3f}: {full * 1e3:.1f} ms/step real, {compute * 1e3:.1f} ms/step cached"
        )
        write_out({"truth_input_fraction": frac})


if __name__ == "__main__":
    main()
