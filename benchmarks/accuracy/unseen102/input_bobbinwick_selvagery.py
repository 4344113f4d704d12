import time; T0 = time.perf_counter()
"""Size-class classifier for made-to-measure shirts.

Customer body measurements are drafted into pattern-piece features by a
Python generator (one garment at a time), streamed through
tf.data.Dataset.from_generator -> batch -> prefetch into model.fit.
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

SEED = 10201
BATCH = 128
STEPS = 200
EPOCHS = 2
N_MEAS = 12          # neck, chest, bust, waist, hip, shoulder, sleeve, ...
N_FEAT = 48          # drafted pattern-piece features
N_SIZES = 8
DRAFT_PASSES = 4     # ease passes per pattern piece


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


def draft_pattern(meas):
    """Walk every pattern piece through several ease passes (pure Python)."""
    feats = [0.0] * N_FEAT
    for p in range(DRAFT_PASSES):
        ease = 1.0 + 0.015 * p
        for j in range(N_FEAT):
            m = meas[j % N_MEAS]
            curve = math.sin(m * ease * 0.013 + j) + math.cos(m * 0.007 * (p + 1))
            feats[j] += curve / DRAFT_PASSES
    return feats


def fitting_room(seed):
    rnd = random.Random(seed)
    while True:
        chest = rnd.gauss(96.0, 9.0)
        meas = [chest * (0.35 + 0.06 * k) + rnd.gauss(0.0, 1.5) for k in range(N_MEAS)]
        feats = draft_pattern(meas)
        feats[0] = (chest - 96.0) / 9.0
        size = min(N_SIZES - 1, max(0, int((chest - 72.0) / 6.0)))
        yield np.asarray(feats, dtype=np.float32), np.int32(size)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(N_SIZES),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


SIG = (tf.TensorSpec(shape=(N_FEAT,), dtype=tf.float32),
       tf.TensorSpec(shape=(), dtype=tf.int32))


def train(ds):
    model = make_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), time.perf_counter() - t, hist.history["loss"][-1]


ds = (tf.data.Dataset.from_generator(lambda: fitting_room(SEED), output_signature=SIG)
      .batch(BATCH)
      .prefetch(2))
full, fit_wall, loss = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"input_bobbinwick_selvagery: {1.0 / full:.1f} steps/s, fit {fit_wall:.1f}s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    gen = fitting_room(SEED)
    rows = [next(gen) for _ in range(BATCH)]
    batch = (np.stack([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=np.int32))
    compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
