"""Agricultural field-boundary segmentation with a small U-Net on multispectral patches.

Usage: python compute_unet_fieldboundary.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf
from keras import layers

N_PATCHES = 960
PATCH = 64
BANDS = 6
BATCH_SIZE = 16
SEED = 9


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def make_patches(rng):
    yy, xx = np.mgrid[0:PATCH, 0:PATCH]
    x = rng.normal(0, 0.1, size=(N_PATCHES, PATCH, PATCH, BANDS)).astype(np.float32)
    y = np.zeros((N_PATCHES, PATCH, PATCH, 1), dtype=np.float32)
    for i in range(N_PATCHES):
        period = rng.integers(12, 32)
        angle = rng.uniform(0, np.pi)
        u = xx * np.cos(angle) + yy * np.sin(angle)
        boundary = (np.mod(u, period) < 2).astype(np.float32)
        y[i, ..., 0] = boundary
        x[i] += (np.sin(u / period * np.pi)[..., None] * rng.uniform(0.2, 1.0, size=BANDS)).astype(
            np.float32
        )
    return x, y


def conv_block(x, filters):
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    return layers.Conv2D(filters, 3, padding="same", activation="relu")(x)


def build_model():
    inputs = keras.Input(shape=(PATCH, PATCH, BANDS))
    skips = []
    x = inputs
    for filters in (16, 32, 64):
        x = conv_block(x, filters)
        skips.append(x)
        x = layers.MaxPooling2D()(x)
    x = conv_block(x, 96)
    for filters, skip in zip((64, 32, 16), reversed(skips)):
        x = layers.Conv2DTranspose(filters, 2, strides=2, padding="same")(x)
        x = layers.Concatenate()([x, skip])
        x = conv_block(x, filters)
    outputs = layers.Conv2D(1, 1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs, name="field_unet")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.BinaryIoU(target_class_ids=[1], name="iou")],
    )
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    x, y = make_patches(rng)
    print(f"patches {x.shape}, boundary pixels {y.mean():.3f}")

    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(x, y, batch_size=BATCH_SIZE, epochs=1, shuffle=True, callbacks=[clock], verbose=2)
    full = clock.seconds_per_step()
    steps = len(clock.marks)
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        keras.utils.set_random_seed(SEED)
        model = build_model()
        clock = StepClock()
        cached = tf.data.Dataset.from_tensors((x[:BATCH_SIZE], y[:BATCH_SIZE])).repeat()
        model.fit(cached, epochs=1, steps_per_epoch=steps, callbacks=[clock], verbose=2)
        compute = clock.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
