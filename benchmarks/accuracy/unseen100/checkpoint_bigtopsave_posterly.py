import time; T0 = time.perf_counter()
"""Poster print-run forecaster that checkpoints the whole model constantly.

The print shop orders posters for every town on the route; the model learns
how many posters a town needs from its population, the last visit, the
competing shows and the billboard count.  The author was burned by a crashed
laptop once, so a callback saves the complete model to a .keras file every
few batches.
"""
import os
import sys
import json
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 32
EPOCHS = 3
STEPS_PER_EPOCH = 60
SAVE_EVERY = 2
N_FEATURES = 32


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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


class SaveOften(keras.callbacks.Callback):
    """Save the full model every SAVE_EVERY batches; keep saves out of step gaps."""

    def __init__(self, folder, timer):
        super().__init__()
        self.folder = folder
        self.timer = timer
        self.seconds = 0.0
        self.count = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SAVE_EVERY:
            return
        t = time.perf_counter()
        self.model.save(os.path.join(self.folder, f"posters-{self.count % 3}.keras"))
        self.count += 1
        now = time.perf_counter()
        self.seconds += now - t
        if self.timer.last is not None:
            self.timer.last = now


def make_towns(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (BATCH * STEPS_PER_EPOCH, N_FEATURES)).astype(np.float32)
    y = (np.abs(x[:, :4]).sum(axis=1, keepdims=True) * 250 + 100).astype(np.float32) / 1000.0
    return x, y


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(N_FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, folder):
    timer = StepTimer()
    saver = SaveOften(folder, timer)
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
              callbacks=[timer, saver], verbose=0)
    return timer.seconds_per_step(), saver.seconds, saver.count


def main():
    folder = tempfile.mkdtemp(prefix="u100_checkpoint_bigtopsave_posterly_")
    try:
        x, y = make_towns(17)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048, seed=17).repeat().batch(BATCH).prefetch(2)
        keras.utils.set_random_seed(17)
        full, save_s, n = train(ds, folder)
        wall = time.perf_counter() - T0
        emit({"steps_per_second": 1.0 / full})
        print(f"[posterly] fit with {n} full-model saves: {full*1000:.1f} ms/step, "
              f"saves {save_s:.1f}s = {save_s/wall:.1%} of wall {wall:.1f}s")
        if TRUTH:
            batch = next(iter(ds))
            keras.utils.set_random_seed(17)
            compute, save2, n2 = train(tf.data.Dataset.from_tensors(batch).repeat(), folder)
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            wall = time.perf_counter() - T0
            print(f"[posterly] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
                  f"input fraction {frac:.3f}; saves {save_s+save2:.1f}s = "
                  f"{(save_s+save2)/wall:.1%} of wall {wall:.1f}s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
