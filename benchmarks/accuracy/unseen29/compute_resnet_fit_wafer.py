"""Wafer-map defect pattern classification (center, donut, edge-ring, scratch ...).

Wafer bin maps are generated once and kept in memory as NumPy arrays; a
cached, shuffled ``tf.data`` pipeline of in-memory tensor slices feeds a small
ResNet (residual blocks with batch norm) trained with ``model.fit``.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

IMG = 48
N_CLASSES = 8
N_MAPS = 4096
BATCH = 32
STEPS_PER_EPOCH = 18
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_wafers(seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:IMG, 0:IMG].astype(np.float32)
    r = np.sqrt((yy - IMG / 2) ** 2 + (xx - IMG / 2) ** 2) / (IMG / 2)
    wafer = (r < 1.0).astype(np.float32)
    labels = rng.integers(0, N_CLASSES, N_MAPS).astype(np.int32)
    maps = (rng.random((N_MAPS, IMG, IMG)) < 0.05).astype(np.float32)
    for i, c in enumerate(labels):
        if c == 1:
            maps[i] += (r < 0.3) * 0.8
        elif c == 2:
            maps[i] += ((r > 0.4) & (r < 0.6)) * 0.8
        elif c == 3:
            maps[i] += (r > 0.85) * 0.8
        elif c == 4:
            maps[i] += (np.abs(yy - xx + rng.integers(-20, 20)) < 2) * 0.8
        elif c >= 5:
            maps[i] += (rng.random((IMG, IMG)) < 0.05 * c) * 0.8
    maps = np.clip(maps, 0, 1) * wafer
    return maps[..., None], labels


def res_block(x, filters, stride):
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
    inp = keras.Input((IMG, IMG, 1))
    x = keras.layers.Conv2D(32, 3, padding="same", use_bias=False)(inp)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    for filters, stride in ((32, 1), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1)):
        x = res_block(x, filters, stride)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    maps, labels = make_wafers()
    ds = (tf.data.Dataset.from_tensor_slices((maps, labels)).cache()
          .shuffle(N_MAPS, seed=0).repeat().batch(BATCH).prefetch(tf.data.AUTOTUNE))
    full = train(ds)
    report("steps_per_second", 1.0 / full)
    msg = f"wafer: {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
