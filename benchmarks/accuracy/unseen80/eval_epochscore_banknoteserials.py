"""Banknote serial numbers: scanned serial strips -> printing series.

Trains a small CNN on in-memory serial-number strips (glyph widths, prefix
letters, star/replacement marks, ink tone by series). A callback scores the
whole held-out archive of strips with model.predict in on_epoch_end (both in
the normal and in the truth run) and keeps per-series accuracy.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 64
STEPS = 25
EPOCHS = 4
H, W = 16, 96
SERIES = 9            # e.g. 1928, 1934, 1950, 1963, 1977, 1985, 1996, 2004, 2013
N_TRAIN = BATCH * STEPS
N_HELDOUT = 24000


def synth_strips(n, seed):
    rng = np.random.default_rng(seed)
    series = rng.integers(0, SERIES, size=n)
    digits = rng.integers(0, 10, size=(n, 10))
    xx = np.arange(W, dtype=np.float32)
    cell = 8.0 + 0.25 * series[:, None]                        # glyph pitch by series
    pos = (xx[None, :] % cell) / cell
    glyph = np.take_along_axis(digits, np.minimum((xx[None, :] // cell).astype(int), 9), 1)
    col = 0.5 + 0.5 * np.sin(2 * np.pi * pos * (1 + glyph / 5.0))
    yy = np.linspace(-1, 1, H, dtype=np.float32)
    rows = np.exp(-(yy[None, :, None] * (1.5 + 0.1 * series[:, None, None])) ** 2)
    img = rows * col[:, None, :] * (0.6 + 0.04 * series[:, None, None])
    star = (series % 3 == 0)[:, None, None] * (xx[None, None, :] > W - 6) * 0.5
    img = img + star + rng.normal(0, 0.08, size=(n, H, W))
    return img[..., None].astype(np.float32), series.astype(np.int32)


def build_model():
    inp = keras.Input((H, W, 1))
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(64, activation="relu")(x)
    out = layers.Dense(SERIES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class ArchiveScorer(keras.callbacks.Callback):
    """Scores the whole held-out serial archive after every epoch."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.x, batch_size=256, verbose=0)
        pred = probs.argmax(axis=1)
        per_series = [float((pred[self.y == s] == s).mean()) for s in range(SERIES)]
        self.history.append((float((pred == self.y).mean()), per_series))
        self.seconds += time.perf_counter() - t


def train(dataset, held_x, held_y):
    keras.utils.set_random_seed(13)
    model = build_model()
    timer = StepTimer()
    scorer = ArchiveScorer(held_x, held_y)
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer, scorer], verbose=0)
    return timer.seconds_per_step(), scorer


def main():
    x, y = synth_strips(N_TRAIN, 1928)
    held_x, held_y = synth_strips(N_HELDOUT, 2013)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=2).batch(BATCH).repeat()
    full, scorer = train(ds, held_x, held_y)
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[banknoteserials] normal run: {full * 1000:.1f} ms/step, "
          f"held-out acc {scorer.history[-1][0]:.3f}, evaluation {scorer.seconds:.1f} s "
          f"of {wall:.1f} s wall = {100 * scorer.seconds / wall:.1f}% of wall")
    if TRUTH:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        compute, _ = train(fixed, held_x, held_y)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[banknoteserials] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
