"""Watermark scans of postage-stamp paper: transmitted-light scans -> watermark type.

A keras.utils.PyDataset (workers=1) renders each batch in __getitem__: laid
and chain lines, fibre texture (box-blurred noise), and a watermark motif
(crown, posthorn, multiple crown, rosette, letters, none) traced point by
point. It feeds model.fit.
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


BATCH = 32
STEPS = 110
EPOCHS = 3
SIDE = 48
MOTIFS = ["none", "crown", "posthorn", "multi_crown", "rosette", "script_letters"]


def motif_points(kind, rng):
    pts = []
    if kind == "crown":
        for t in range(120):
            a = math.pi * t / 119.0
            pts.append((0.5 + 0.25 * math.cos(a), 0.55 - 0.12 * abs(math.sin(3 * a))))
        for t in range(40):
            pts.append((0.25 + 0.5 * t / 39.0, 0.62))
    elif kind == "posthorn":
        for t in range(160):
            a = 2.2 * math.pi * t / 159.0
            r = 0.08 + 0.14 * t / 159.0
            pts.append((0.5 + r * math.cos(a), 0.5 + r * math.sin(a)))
    elif kind == "multi_crown":
        for cx in (0.25, 0.75):
            for cy in (0.3, 0.75):
                for t in range(40):
                    a = math.pi * t / 39.0
                    pts.append((cx + 0.1 * math.cos(a), cy - 0.05 * abs(math.sin(3 * a))))
    elif kind == "rosette":
        for t in range(180):
            a = 2 * math.pi * t / 179.0
            r = 0.2 * abs(math.cos(3 * a)) + 0.04
            pts.append((0.5 + r * math.cos(a), 0.5 + r * math.sin(a)))
    elif kind == "script_letters":
        for t in range(160):
            u = t / 159.0
            pts.append((0.15 + 0.7 * u, 0.5 + 0.12 * math.sin(14 * u) * math.cos(3 * u)))
    jitter = rng.normal(0.0, 0.01, size=(len(pts), 2)) if pts else None
    return [(x + jx, y + jy) for (x, y), (jx, jy) in zip(pts, jitter)] if pts else pts


def render_scan(kind_idx, rng):
    img = rng.normal(0.0, 1.0, size=(SIDE, SIDE)).astype(np.float32)
    for _ in range(8):  # fibre texture: repeated box blur
        img = (img + np.roll(img, 1, 0) + np.roll(img, -1, 0)
               + np.roll(img, 1, 1) + np.roll(img, -1, 1)) / 5.0
    img *= 0.08
    laid = rng.uniform(2.5, 3.5)
    chain = rng.integers(9, 13)
    yy = np.arange(SIDE, dtype=np.float32)
    img += 0.05 * np.cos(2 * math.pi * yy / laid)[:, None]
    img[:, ::chain] += 0.08
    mark = np.zeros((SIDE, SIDE), np.float32)
    for (x, y) in motif_points(MOTIFS[kind_idx], rng):
        c = int(round(x * (SIDE - 1)))
        r = int(round(y * (SIDE - 1)))
        if 1 <= r < SIDE - 1 and 1 <= c < SIDE - 1:
            mark[r - 1:r + 2, c - 1:c + 2] += 0.18
    img += np.minimum(mark, 0.5) * rng.uniform(0.6, 1.2)
    img = 0.6 + img * rng.uniform(0.8, 1.3)
    return img


class WatermarkScans(keras.utils.PyDataset):
    def __init__(self, n_batches, seed, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches
        self.seed = seed

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        xs = np.empty((BATCH, SIDE, SIDE, 1), np.float32)
        ys = rng.integers(0, len(MOTIFS), size=BATCH).astype(np.int32)
        for i in range(BATCH):
            xs[i, :, :, 0] = render_scan(int(ys[i]), rng)
        return xs, ys


def build_model():
    inp = keras.Input((SIDE, SIDE, 1))
    x = layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(64, activation="relu")(x)
    out = layers.Dense(len(MOTIFS), activation="softmax")(x)
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


def train(data, **fit_kwargs):
    keras.utils.set_random_seed(11)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **fit_kwargs)
    return timer.seconds_per_step(), hist.history


def main():
    scans = WatermarkScans(STEPS, seed=1840, workers=1, use_multiprocessing=False)
    full, hist = train(scans)
    emit({"steps_per_second": 1.0 / full})
    print(f"[watermarkscans] normal run: {full * 1000:.1f} ms/step, "
          f"loss {hist['loss'][-1]:.3f}, acc {hist['accuracy'][-1]:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        xb, yb = scans[0]
        fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        compute, _ = train(fixed, steps_per_epoch=len(scans))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[watermarkscans] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
