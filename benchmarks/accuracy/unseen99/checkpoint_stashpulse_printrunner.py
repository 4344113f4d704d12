import time; T0 = time.perf_counter()
"""Print-run order forecaster that checkpoints the whole model very often.

Orders for printed map sheets (sheet popularity, season, edition age, paper
stock, previous runs) are held in memory; a dense network forecasts the next
print-run size.  A nervous callback writes the complete model to a .keras file
every few batches, so the run is dominated by saving.
"""
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

NFEAT = 48
BATCH = 64
STEPS = 40
EPOCHS = 3
SAVE_EVERY = 1


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


class FrequentSave(keras.callbacks.Callback):
    def __init__(self, folder, timer):
        super().__init__()
        self.folder = folder
        self.timer = timer
        self.seconds = 0.0
        self.saves = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SAVE_EVERY:
            return
        t = time.perf_counter()
        self.model.save(os.path.join(self.folder, f"printrun_{self.saves % 3}.keras"))
        self.saves += 1
        self.seconds += time.perf_counter() - t
        self.timer.last = time.perf_counter()


def orders(n, rs):
    x = rs.normal(0, 1, (n, NFEAT)).astype(np.float32)
    w = np.random.RandomState(3).normal(0, 0.3, (NFEAT, 1)).astype(np.float32)
    y = (np.log1p(np.exp(x @ w)) * 500).astype(np.float32) / 500.0
    return x, y


rs = np.random.RandomState(10)
ox, oy = orders(BATCH * STEPS, rs)


def build_model():
    keras.utils.set_random_seed(23)
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, folder):
    model = build_model()
    timer = StepTimer()
    saver = FrequentSave(folder, timer)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, saver], verbose=0)
    return timer.seconds_per_step(), saver


def order_dataset():
    ds = tf.data.Dataset.from_tensor_slices((ox, oy)).shuffle(4096, seed=1)
    return ds.repeat().batch(BATCH).prefetch(2)


folder = tempfile.mkdtemp(prefix="u99_checkpoint_stashpulse_printrunner_")
try:
    full, saver = train(order_dataset(), folder)
    save_s = saver.seconds
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"printrunner: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, {saver.saves} saves "
          f"{save_s:.1f} s = {save_s / wall:.1%} of wall {wall:.1f} s")
    if TRUTH:
        one = next(iter(order_dataset()))
        compute, saver2 = train(tf.data.Dataset.from_tensors(one).repeat(), folder)
        save_s += saver2.seconds
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"printrunner: truth compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, "
              f"saves {save_s:.1f} s = {save_s / wall:.1%} of wall {wall:.1f} s")
finally:
    shutil.rmtree(folder, ignore_errors=True)
