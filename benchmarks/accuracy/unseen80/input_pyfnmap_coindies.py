"""Coin die varieties: synthetic obverse close-ups -> die variety class.

tf.data.Dataset.range(...).map(tf.numpy_function(render)) without parallel
calls renders each coin crop (legend letters as Gaussian strokes, doubled-die
offset, repunched mint mark, die cracks, wear), then batch -> model.fit.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import math

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


BATCH = 48
STEPS = 70
EPOCHS = 3
SIDE = 56
VARIETIES = ["normal", "doubled_die_obverse", "repunched_mintmark",
             "die_crack", "cud", "clashed_dies", "over_mintmark", "filled_die"]
YY, XX = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32)


def stroke(img, x0, y0, x1, y1, width, amp):
    n = max(int(math.hypot(x1 - x0, y1 - y0) / 1.5), 2)
    for t in range(n):
        u = t / (n - 1)
        cx = x0 + u * (x1 - x0)
        cy = y0 + u * (y1 - y0)
        img += amp * np.exp(-((XX - cx) ** 2 + (YY - cy) ** 2) / (2 * width * width))


def render_coin(index):
    rng = np.random.default_rng(int(index) * 7919 + 1955)
    v = int(rng.integers(0, len(VARIETIES)))
    img = np.zeros((SIDE, SIDE), np.float32)
    letters = rng.integers(3, 5)
    shift = 1.6 if v == 1 else 0.0
    for k in range(letters):
        x = 8 + k * 11 + rng.normal(0, 0.5)
        y = 14 + rng.normal(0, 0.5)
        stroke(img, x, y, x + 4, y + 10, 1.0, 0.6)
        stroke(img, x + 4, y + 10, x + 8, y, 1.0, 0.6)
        if shift:
            stroke(img, x + shift, y - shift, x + 4 + shift, y + 10 - shift, 0.9, 0.35)
    mx, my = 40 + rng.normal(0, 1), 40 + rng.normal(0, 1)
    stroke(img, mx, my, mx + 5, my + 5, 1.1, 0.7)
    if v in (2, 6):
        stroke(img, mx + 1.5, my - 1.0, mx + 6.5, my + 4.0, 0.8, 0.4 if v == 2 else 0.7)
    if v == 3:
        a = rng.uniform(0, 2 * math.pi)
        stroke(img, 28, 28, 28 + 26 * math.cos(a), 28 + 26 * math.sin(a), 0.6, 0.5)
    if v == 4:
        a = rng.uniform(0, 2 * math.pi)
        img += 0.9 * (((XX - 28 - 30 * math.cos(a)) ** 2 + (YY - 28 - 30 * math.sin(a)) ** 2) < 90)
    if v == 5:
        stroke(img, 10, 44, 22, 30, 1.4, 0.25)
    if v == 7:
        img[12:26, 6:50] = np.maximum(img[12:26, 6:50], 0.5)
    rim = np.abs(np.hypot(XX - 28, YY - 28) - 26.5) < 1.5
    img += 0.8 * rim
    wear = rng.uniform(0.6, 1.0)
    img = img * wear + rng.normal(0, 0.05, size=img.shape)
    luster = np.cos(np.arctan2(YY - 28, XX - 28) * 4 + rng.uniform(0, 6.28)) * 0.05
    return (img + luster).astype(np.float32)[..., None], np.int32(v)


def make_dataset():
    ds = tf.data.Dataset.range(10_000_000)
    ds = ds.map(lambda i: tf.numpy_function(render_coin, [i], (tf.float32, tf.int32)))
    ds = ds.map(lambda x, y: (tf.ensure_shape(x, (SIDE, SIDE, 1)), tf.ensure_shape(y, ())))
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((SIDE, SIDE, 1))
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = layers.GlobalMaxPooling2D()(x)
    x = layers.Dense(96, activation="relu")(x)
    out = layers.Dense(len(VARIETIES), activation="softmax")(x)
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


def train(dataset):
    keras.utils.set_random_seed(3)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    full, hist = train(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"[coindies] normal run: {full * 1000:.1f} ms/step, "
          f"loss {hist['loss'][-1]:.3f}, acc {hist['accuracy'][-1]:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        compute, _ = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[coindies] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
