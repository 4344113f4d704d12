"""Coin hoard dating: hoard composition (counts per mint x reign x denomination)
-> estimated deposition decade.

model.fit on in-memory hoard vectors; a single callback stamps step time and
saves the full model (.keras, with optimizer state) after every batch, in the
normal and in the truth run. The clock restarts after each save, so step
gaps never contain a save.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile

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


BATCH = 16
STEPS = 45
EPOCHS = 3
MINTS, REIGNS, DENOMS = 24, 30, 6
N_FEAT = MINTS * REIGNS * DENOMS   # 4320 cells
DECADES = 40


def synth_hoards(n, seed):
    rng = np.random.default_rng(seed)
    decade = rng.integers(0, DECADES, size=n)
    reign_end = (decade * REIGNS) // DECADES
    x = np.zeros((n, MINTS, REIGNS, DENOMS), np.float32)
    for i in range(n):
        r = rng.integers(0, reign_end[i] + 1, size=rng.integers(40, 200))
        m = rng.integers(0, MINTS, size=r.size)
        d = rng.integers(0, DENOMS, size=r.size)
        np.add.at(x[i], (m, r, d), 1.0)
    x = np.log1p(x.reshape(n, N_FEAT))
    return x, decade.astype(np.int32)


def build_model():
    inp = keras.Input((N_FEAT,))
    x = layers.Dense(1024, activation="relu")(inp)
    x = layers.Dense(256, activation="relu")(x)
    out = layers.Dense(DECADES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class TimedSaver(keras.callbacks.Callback):
    """Stamps the step, then saves the full model, then restarts the clock."""

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
        done = time.perf_counter()
        self.save_seconds += done - now
        self.last = done

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def train(dataset, path):
    keras.utils.set_random_seed(17)
    model = build_model()
    saver = TimedSaver(path)
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[saver], verbose=0)
    return saver


def main():
    root = tempfile.mkdtemp(prefix="u80_checkpoint_stepsave_coinhoards_")
    try:
        x, y = synth_hoards(BATCH * STEPS, 1643)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=3).batch(BATCH).repeat()
        saver = train(ds, os.path.join(root, "hoard_dater.keras"))
        full = saver.seconds_per_step()
        wall = time.perf_counter() - T0
        emit({"steps_per_second": 1.0 / full})
        print(f"[coinhoards] normal run: {full * 1000:.1f} ms/step, {saver.saves} saves, "
              f"save {saver.save_seconds:.1f} s of {wall:.1f} s wall = "
              f"{100 * saver.save_seconds / wall:.1f}% of wall")
        if TRUTH:
            fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
            compute = train(fixed, os.path.join(root, "hoard_dater_truth.keras")).seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[coinhoards] truth: compute {compute * 1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
