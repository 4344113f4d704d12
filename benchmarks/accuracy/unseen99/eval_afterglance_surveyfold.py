import time; T0 = time.perf_counter()
"""Survey field-note quality model with a heavy end-of-epoch check.

Field notes are reduced to numeric observations (angle residuals, chaining
corrections, instrument height, weather codes) held in memory.  Training is
quick, but after every epoch a callback scores the whole held-out archive of
notes with model.predict, as a surveyor's QA script would.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

NFEAT = 96
BATCH = 64
STEPS = 60
EPOCHS = 3
N_HELD = 400000


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


class ArchiveCheck(keras.callbacks.Callback):
    def __init__(self, notes):
        super().__init__()
        self.notes = notes
        self.seconds = 0.0
        self.flagged = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        scores = self.model.predict(self.notes, batch_size=512, verbose=0)
        self.flagged.append(int((scores[:, 0] > 0).sum()))
        self.seconds += time.perf_counter() - t


def field_notes(n, rs):
    w = np.random.RandomState(1).normal(0, 1, (NFEAT,)).astype(np.float32)
    x = rs.normal(0, 1, (n, NFEAT)).astype(np.float32)
    y = ((x @ w + rs.normal(0, 0.5, n)) > 0).astype(np.float32)
    return x, y


rs = np.random.RandomState(6)
train_x, train_y = field_notes(BATCH * STEPS, rs)
held_x, _ = field_notes(N_HELD, rs)
T_DATA = time.perf_counter() - T0


def build_model():
    keras.utils.set_random_seed(19)
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    check = ArchiveCheck(held_x)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, check], verbose=0)
    return timer.seconds_per_step(), check


def train_dataset():
    ds = tf.data.Dataset.from_tensor_slices((train_x, train_y)).shuffle(4096, seed=2)
    return ds.repeat().batch(BATCH).prefetch(2)


full, check = train(train_dataset())
eval_s = check.seconds
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"surveyfold: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, evaluation "
      f"{eval_s:.1f} s = {eval_s / wall:.1%} of wall {wall:.1f} s (data ready at {T_DATA:.1f} s), flagged {check.flagged}")

if TRUTH:
    one = next(iter(train_dataset()))
    compute, check2 = train(tf.data.Dataset.from_tensors(one).repeat())
    eval_s += check2.seconds
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print(f"surveyfold: truth compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, "
          f"evaluation {eval_s:.1f} s = {eval_s / wall:.1%} of wall {wall:.1f} s")
