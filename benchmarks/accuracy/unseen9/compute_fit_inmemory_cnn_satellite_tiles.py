"""Land-cover classification of multispectral satellite tiles (synthetic), in-memory arrays.

All tiles live in one numpy array and go to model.fit(x, y) directly; the cost is a fairly wide
VGG-style CNN on 48x48x6 tiles, batch 32.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

N = 1280
SIZE = 48
BANDS = 6
CLASSES = 10
BATCH = 32
EPOCHS = 2


def synth_tiles(rng):
    y = rng.integers(0, CLASSES, N)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    base = rng.normal(0, 0.3, (N, SIZE, SIZE, BANDS)).astype(np.float32)
    for c in range(CLASSES):
        idx = np.where(y == c)[0]
        pattern = np.sin((c + 1) * 3 * xx + c * yy)[..., None] * np.linspace(0.2, 1, BANDS)
        base[idx] += pattern.astype(np.float32)
    return base, y


def build_model():
    def block(h, f):
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        h = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(h)
        return keras.layers.MaxPooling2D()(h)

    inp = keras.Input((SIZE, SIZE, BANDS))
    h = block(inp, 32)
    h = block(h, 64)
    h = block(h, 96)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(CLASSES, activation="softmax")(h)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class BatchTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())

    def mean_step(self, skip=5):
        s = self.stamps[skip - 1 :]
        return (s[-1] - s[0]) / (len(s) - 1)


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    x, y = synth_tiles(np.random.default_rng(5))
    model = build_model()
    model.summary()
    bt = BatchTimes()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[bt], verbose=2)
    full = bt.mean_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"{1.0 / full:.2f} steps/s")

    if args.truth:
        one = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        model = build_model()
        bt2 = BatchTimes()
        model.fit(one, steps_per_epoch=N // BATCH, epochs=EPOCHS, callbacks=[bt2], verbose=0)
        compute = bt2.mean_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"truth input fraction {frac:.3f}  ({full * 1e3:.1f} vs {compute * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
