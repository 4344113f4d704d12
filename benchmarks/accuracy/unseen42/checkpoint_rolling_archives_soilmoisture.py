"""Next-day soil-moisture forecasting for an irrigation scheduler.

Probe readings, weather features and field metadata are generated in memory
as numpy arrays and fed to model.fit. Because the farm's edge box may lose
power, a callback writes a full .keras archive plus a .weights.h5 copy for the
edge runtime after every batch and keeps only the three newest pairs
(rolling retention), so the run spends most of its time serialising the wide
regression network.
"""
import json
import os
import shutil
import sys
import tempfile
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N = 384
FEAT = 96
BATCH = 16
EPOCHS = 4
EVERY = 1
KEEP = 3


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Head: stamps the end of each step (runs before the save callback)."""

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

    def seconds_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


class StepTimerTail(keras.callbacks.Callback):
    """Tail: restarts the step clock after the other callbacks have run."""

    def __init__(self, head):
        super().__init__()
        self.head = head

    def on_train_batch_end(self, batch, logs=None):
        if self.head._last is not None:
            self.head._last = time.perf_counter()


class RollingArchive(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.kept = []
        self.count = 0
        self.seconds = 0.0

    def on_train_batch_end(self, batch, logs=None):
        self.count += 1
        if self.count % EVERY:
            return
        t = time.perf_counter()
        path = os.path.join(self.folder, "soilcast-%06d.keras" % self.count)
        self.model.save(path)
        # weights-only copy for the edge runtime, which cannot read .keras
        wpath = os.path.join(self.folder, "soilcast-%06d.weights.h5" % self.count)
        self.model.save_weights(wpath)
        self.kept.append((path, wpath))
        while len(self.kept) > KEEP:
            for old in self.kept.pop(0):
                os.remove(old)
        self.seconds += time.perf_counter() - t


def make_data(rng):
    x = rng.standard_normal((N, FEAT)).astype(np.float32)
    w = rng.standard_normal(FEAT) / np.sqrt(FEAT)
    y = (0.3 + 0.1 * np.tanh(x @ w) + 0.01 * rng.standard_normal(N)).astype(np.float32)
    return x, y[:, None]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, name="vwc_next_day")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


def fit(data, folder, steps=None):
    model = build_model()
    head = StepTimer()
    saver = RollingArchive(folder)
    cbs = [head, saver, StepTimerTail(head)]
    if steps is None:
        hist = model.fit(*data, batch_size=BATCH, epochs=EPOCHS, callbacks=cbs, verbose=0)
    else:
        hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=cbs, verbose=0)
    return head.seconds_per_step(), hist.history["loss"][-1], saver.seconds


def main():
    truth = "--truth" in sys.argv
    x, y = make_data(np.random.default_rng(SEED))
    tmp = tempfile.mkdtemp(prefix="u42_checkpoint_rolling_archives_soilmoisture_")
    try:
        full, loss, saving = fit((x, y), tmp)
        emit({"steps_per_second": 1.0 / full})
        wall = time.perf_counter() - T0
        msg = "soilcast: %.1f ms/step loss=%.4f saves=%.1fs of %.1fs (%.0f%%)" % (
            full * 1e3, loss, saving, wall, 100 * saving / wall)
        if truth:
            batch = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
            compute, _, _ = fit(tf.data.Dataset.from_tensors(batch).repeat(), tmp,
                                steps=N // BATCH)
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
