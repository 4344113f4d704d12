"""Stamp perforation gauging: simulated edge scans -> perf gauge class.

A Python generator renders one scanned stamp edge per sample (tooth-by-tooth
profile, paper noise, hole wobble) and is wrapped with
tf.data.Dataset.from_generator, batched and fed to model.fit.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import math
import random

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
STEPS = 110
EPOCHS = 3
EDGE_LEN = 384
GAUGES = [10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5, 15.0, 15.5]


def scan_edge(rng):
    """One perforated edge scanned over 40 mm; returns (profile, derivative) and gauge index."""
    gi = rng.randrange(len(GAUGES))
    gauge = GAUGES[gi]
    px_per_mm = EDGE_LEN / 40.0
    pitch = 20.0 / gauge * px_per_mm          # perfs per 2 cm
    hole_r = pitch * rng.uniform(0.26, 0.38)
    phase = rng.uniform(0.0, pitch)
    wobble = rng.uniform(0.0, 0.03)
    fibre = rng.uniform(0.02, 0.06)
    profile = []
    for i in range(EDGE_LEN):
        k = round((i - phase) / pitch)
        centre = phase + k * pitch * (1.0 + wobble * math.sin(0.13 * k))
        d = abs(i - centre)
        depth = math.sqrt(max(hole_r * hole_r - d * d, 0.0)) / hole_r
        ragged = 0.15 * depth * rng.random() if depth > 0.0 else 0.0
        paper = fibre * math.sin(i * 0.37 + phase) + rng.gauss(0.0, 0.03)
        profile.append(depth - ragged + paper)
    prof = np.asarray(profile, dtype=np.float32)
    smooth = np.convolve(prof, np.ones(5, np.float32) / 5.0, mode="same")
    deriv = np.gradient(smooth)
    return np.stack([smooth, deriv * 4.0], axis=-1), gi


def edge_stream(seed):
    rng = random.Random(seed)
    while True:
        x, y = scan_edge(rng)
        yield x, np.int32(y)


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        lambda: edge_stream(1958),
        output_signature=(
            tf.TensorSpec((EDGE_LEN, 2), tf.float32),
            tf.TensorSpec((), tf.int32),
        ),
    )
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((EDGE_LEN, 2))
    x = layers.Conv1D(40, 9, padding="same", activation="relu")(inp)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(56, 7, padding="same", activation="relu")(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(80, 5, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(128, activation="relu")(x)
    out = layers.Dense(len(GAUGES), activation="softmax")(x)
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
    keras.utils.set_random_seed(7)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    full, hist = train(make_dataset())
    emit({"steps_per_second": 1.0 / full})
    print(f"[perfgauge] normal run: {full * 1000:.1f} ms/step, "
          f"loss {hist['loss'][-1]:.3f}, acc {hist['accuracy'][-1]:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        xb, yb = next(iter(make_dataset()))
        fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        compute, _ = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[perfgauge] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
