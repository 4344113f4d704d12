"""Type-foundry glyph recognition: classify rendered glyph images into 62 characters.

Bottleneck (compute): glyph bitmaps are rendered once into memory and streamed by
tf.data from tensors with prefetch; model.fit spends its time in a comparatively
wide convolutional network, so the input side is negligible.
"""
import time
WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SCRIPT = os.path.splitext(os.path.basename(__file__))[0]
_ap = argparse.ArgumentParser()
_ap.add_argument("--truth", action="store_true",
                 help="after the normal run, rerun on one reused batch and report truth_input_fraction")
ARGS = _ap.parse_args()


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps, skip=5):
    g = gaps[skip:] if len(gaps) > skip else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


def finish(full_sec, compute_sec=None, extra=""):
    emit({"steps_per_second": 1.0 / full_sec})
    line = f"[{SCRIPT}] sec/step={full_sec:.4f} steps/s={1.0 / full_sec:.2f}"
    if compute_sec is not None:
        f = truth_fraction(full_sec, compute_sec)
        emit({"truth_input_fraction": f})
        line += f" compute_sec/step={compute_sec:.4f} truth_input_fraction={f:.3f}"
    line += f" wall={time.perf_counter() - WALL_T0:.1f}s" + (" " + extra if extra else "")
    print(line, flush=True)


keras.utils.set_random_seed(71)


BATCH = 32
SIZE = 48
N_CLASSES = 62
N_IMAGES = 2048
STEPS = 10
EPOCHS = 3


def render_glyphs():
    rng = np.random.default_rng(71)
    protos = rng.random((N_CLASSES, 12, 12)) > 0.55
    y = rng.integers(N_CLASSES, size=N_IMAGES).astype(np.int32)
    x = np.zeros((N_IMAGES, SIZE, SIZE, 1), np.float32)
    for i, c in enumerate(y):
        g = np.kron(protos[c], np.ones((3, 3))).astype(np.float32)
        oy, ox = rng.integers(0, SIZE - 36, size=2)
        x[i, oy:oy + 36, ox:ox + 36, 0] = g
    x += rng.normal(0, 0.1, x.shape).astype(np.float32)
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((SIZE, SIZE, 1)),
                          keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                          keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(),
                          keras.layers.Flatten(),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(N_CLASSES)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


X, Y = render_glyphs()


def full_dataset():
    return (tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N_IMAGES, seed=71)
            .batch(BATCH, drop_remainder=True).repeat().prefetch(2))


full = run(full_dataset())
compute = None
if ARGS.truth:
    batch = next(iter(full_dataset()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
finish(full, compute)
