"""Land-cover segmentation-free classifier for aerial image tiles (residual CNN)."""

import argparse
import json
import os
import time

import numpy as np
import keras
import tensorflow as tf

N_TILES = 512
TILE = 48
BANDS = 4
N_CLASSES = 10
BATCH_SIZE = 32
STEPS = 60


def synth_tiles(seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(N_CLASSES, size=N_TILES)
    yy, xx = np.mgrid[0:TILE, 0:TILE] / TILE
    tiles = np.empty((N_TILES, TILE, TILE, BANDS), np.float32)
    for i, y in enumerate(labels):
        freq = 1 + y
        pattern = np.sin(2 * np.pi * freq * (xx * np.cos(y) + yy * np.sin(y)))
        for b in range(BANDS):
            tiles[i, :, :, b] = 0.5 + 0.3 * pattern * (b + 1) / BANDS
    tiles += rng.normal(0, 0.1, tiles.shape).astype(np.float32)
    return tiles, labels.astype(np.int32)


def residual_block(x, filters, stride):
    shortcut = x
    h = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU()(h)
    h = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = keras.layers.BatchNormalization()(shortcut)
    return keras.layers.ReLU()(h + shortcut)


def build_model():
    inp = keras.Input(shape=(TILE, TILE, BANDS))
    x = keras.layers.Conv2D(32, 3, padding="same", use_bias=False)(inp)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    for filters, stride in ((32, 1), (64, 2), (128, 2)):
        x = residual_block(x, filters, stride)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        durations = [b - a for (e0, a), (e1, b) in zip(self.stamps, self.stamps[1:]) if e0 == e1]
        return float(np.mean(durations[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    tiles, labels = synth_tiles()
    ds = (
        tf.data.Dataset.from_tensor_slices((tiles, labels))
        .shuffle(N_TILES)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    model = build_model()
    print(f"model parameters: {model.count_params():,}")
    timer = StepTimer()
    model.fit(ds, epochs=1, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    print(f"real input: {full * 1000:.1f} ms/step")
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        cached = tf.data.Dataset.from_tensors((tiles[:BATCH_SIZE], labels[:BATCH_SIZE])).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(cached, epochs=1, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
