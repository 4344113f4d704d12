"""Species identification from optical insect-trap wingbeat recordings.

Each trap event is summarised as a 160-bin wingbeat power spectrum, generated
in memory. Training is a short model.fit on a modest labelled set, but a
callback scores the full multi-site holdout archive with model.predict at the
end of every epoch (confusion matrix, per-species F1) and runs
model.evaluate on the validation split, which dominates the wall time.
"""
import json
import os
import sys
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
BINS = 160
SPECIES = 14
N_TRAIN = 3200
N_VAL = 20000
N_HOLDOUT = 140000
BATCH = 64
EPOCHS = 3


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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


class HoldoutReport(keras.callbacks.Callback):
    def __init__(self, val, holdout):
        super().__init__()
        self.val, self.holdout = val, holdout
        self.seconds = 0.0
        self.macro_f1 = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        self.model.evaluate(*self.val, batch_size=512, verbose=0)
        probs = self.model.predict(self.holdout[0], batch_size=512, verbose=0)
        pred = probs.argmax(axis=1)
        cm = np.zeros((SPECIES, SPECIES), dtype=np.int64)
        np.add.at(cm, (self.holdout[1], pred), 1)
        tp = np.diag(cm).astype(np.float64)
        f1 = 2 * tp / np.maximum(cm.sum(0) + cm.sum(1), 1)
        self.macro_f1.append(float(f1.mean()))
        self.seconds += time.perf_counter() - t


def make_split(rng, n):
    y = rng.integers(0, SPECIES, n).astype(np.int32)
    f0 = (20 + 6 * y + rng.normal(0, 2.5, n)).astype(np.float32)
    bins = np.arange(BINS, dtype=np.float32)[None, :]
    x = np.exp(-0.5 * ((bins - f0[:, None]) / 2.0) ** 2)
    x += 0.5 * np.exp(-0.5 * ((bins - 2 * f0[:, None]) / 3.0) ** 2)
    x += rng.standard_normal((n, BINS), dtype=np.float32) * 0.15
    return x, y


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((BINS,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(SPECIES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    xtr, ytr = make_split(rng, N_TRAIN)
    val = make_split(rng, N_VAL)
    holdout = make_split(rng, N_HOLDOUT)
    steps = N_TRAIN // BATCH

    model = build_model()
    timer, report = StepTimer(), HoldoutReport(val, holdout)
    model.fit(xtr, ytr, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, report],
              verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    msg = ("insect-traps: %.1f ms/step macroF1=%.3f eval=%.1fs of %.1fs (%.0f%%)" % (
        full * 1e3, report.macro_f1[-1], report.seconds, wall, 100 * report.seconds / wall))
    if truth:
        batch = (tf.constant(xtr[:BATCH]), tf.constant(ytr[:BATCH]))
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
                   steps_per_epoch=steps, callbacks=[timer2, HoldoutReport(val, holdout)],
                   verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
    print(msg)


if __name__ == "__main__":
    main()
