import time; T0 = time.perf_counter()
import json
import os
import sys
import tempfile
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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


# Vintage lot blending: each row is one barrel lot (cooperage, toast level, fill
# date, topping history, lab panel: pH, TA, VA, free SO2, alcohol, malic ...) and a
# wide MLP scores its fit for the Grand Vin blend. The cellar master insists on a
# full .keras snapshot after every batch; a single callback stamps the step, then
# saves, then restarts the clock so step gaps never include the save.
FEATS = 64
BATCH = 32
N_LOTS = 8192
STEPS_PER_EPOCH = 70
EPOCHS = 3
SEED = 94


def lot_table():
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(N_LOTS, FEATS)).astype(np.float32)
    y = (np.tanh(x[:, :8].sum(1) / 3) > 0.1).astype(np.float32)[:, None]
    return x, y


class SnapshotStepTimer(keras.callbacks.Callback):
    def __init__(self, path):
        super().__init__()
        self.path = path
        self.gaps = []
        self.last = None
        self.save_seconds = 0.0
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.model.save(self.path)
        self.saves += 1
        self.last = time.perf_counter()
        self.save_seconds += self.last - now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def run(ds, path):
    model = build_model()
    cb = SnapshotStepTimer(path)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[cb], verbose=0)
    return cb.seconds_per_step(), cb


root = tempfile.mkdtemp(prefix="u94_checkpoint_barrelsnap_vintagelots_")
try:
    x, y = lot_table()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    full, cb = run(ds, os.path.join(root, "grand_vin_blend.keras"))
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print("vintage lots: %.2f ms/step, %.1f steps/s, %d saves took %.1f s of wall %.1f s = %.1f%%"
          % (full * 1e3, 1.0 / full, cb.saves, cb.save_seconds, wall, 100 * cb.save_seconds / wall))
    if TRUTH:
        one = next(iter(ds))
        compute, cb2 = run(tf.data.Dataset.from_tensors(one).repeat(), os.path.join(root, "truth_blend.keras"))
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print("truth: compute %.2f ms/step, input fraction %.3f; saves %.1f s of total wall %.1f s = %.1f%%"
              % (compute * 1e3, frac, cb.save_seconds + cb2.save_seconds, wall,
                 100 * (cb.save_seconds + cb2.save_seconds) / wall))
finally:
    shutil.rmtree(root, ignore_errors=True)
