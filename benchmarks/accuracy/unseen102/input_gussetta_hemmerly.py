import time; T0 = time.perf_counter()
"""Alteration-needed classifier for ready-to-wear jackets.

A keras.utils.PyDataset assembles every batch in __getitem__ with Python:
each fitting ticket (pinned measurements, ease allowances, seam notes) is
turned into a feature row by walking the alteration rules one by one.
"""
import json
import math
import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEED = 10202
BATCH = 96
STEPS = 330
EPOCHS = 2
N_FEAT = 64
N_ALTER = 6          # take in, let out, shorten, lengthen, re-set sleeve, none
RULE_PASSES = 9


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def ticket_row(rnd):
    pinned = [rnd.uniform(-4.0, 4.0) for _ in range(16)]   # cm pinned at fitting
    row = [0.0] * N_FEAT
    for p in range(RULE_PASSES):
        for j in range(N_FEAT):
            d = pinned[j % 16]
            row[j] += math.tanh(d * (0.3 + 0.05 * p)) * math.cos(0.11 * j * (p + 1)) / RULE_PASSES
    label = int(abs(pinned[0] + pinned[3]) * 0.9) % N_ALTER
    row[1] = pinned[0] / 4.0
    row[2] = pinned[3] / 4.0
    return row, label


class FittingTickets(keras.utils.PyDataset):
    def __init__(self, seed, **kwargs):
        super().__init__(workers=1, use_multiprocessing=False, **kwargs)
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        rnd = random.Random(self.seed * 100003 + idx)
        rows, labels = [], []
        for _ in range(BATCH):
            r, l = ticket_row(rnd)
            rows.append(r)
            labels.append(l)
        return np.asarray(rows, dtype=np.float32), np.asarray(labels, dtype=np.int32)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(N_ALTER),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(data, **kw):
    model = make_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step(), time.perf_counter() - t, hist.history["loss"][-1]


full, fit_wall, loss = train(FittingTickets(SEED))
emit({"steps_per_second": 1.0 / full})
print(f"input_gussetta_hemmerly: {1.0 / full:.1f} steps/s, fit {fit_wall:.1f}s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = FittingTickets(SEED)[0]
    compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
