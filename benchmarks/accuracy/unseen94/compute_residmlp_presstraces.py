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


# Basket press pressure traces: each pressing cycle logs 512 pressure samples (bar)
# of the membrane press; a residual MLP predicts free-run / press-fraction yield
# and phenolic pick-up. The traces are generated once into memory and fed with
# tf.data.Dataset.from_tensor_slices + prefetch, so the step is compute-bound.
TRACE = 512
WIDTH = 768
BLOCKS = 4
BATCH = 256
N_CYCLES = 8192
STEPS_PER_EPOCH = 32
EPOCHS = 6
SEED = 94


def press_traces():
    rng = np.random.default_rng(SEED)
    t = np.linspace(0, 1, TRACE, dtype=np.float32)
    ramps = rng.uniform(0.8, 2.0, (N_CYCLES, 1)).astype(np.float32)
    peaks = rng.uniform(0.6, 2.0, (N_CYCLES, 1)).astype(np.float32)
    cycles = np.floor(t[None, :] * rng.integers(3, 8, (N_CYCLES, 1))).astype(np.float32)
    x = peaks * (1 - np.exp(-ramps * 6 * (t[None, :] * 8 % 1))) * (1 + 0.1 * cycles)
    x += rng.normal(0, 0.03, x.shape).astype(np.float32)
    y = np.stack([0.6 + 0.1 * peaks[:, 0] - 0.05 * ramps[:, 0], 0.2 * peaks[:, 0] ** 2], axis=1)
    return x.astype(np.float32), y.astype(np.float32)


def make_dataset(x, y):
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(BATCH, drop_remainder=True).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((TRACE,))
    h = keras.layers.Dense(WIDTH, activation="relu")(inp)
    for _ in range(BLOCKS):
        r = keras.layers.Dense(WIDTH, activation="relu")(h)
        r = keras.layers.Dense(WIDTH)(r)
        h = keras.layers.Activation("relu")(keras.layers.Add()([h, r]))
    out = keras.layers.Dense(2)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


x, y = press_traces()
full = run(make_dataset(x, y))
emit({"steps_per_second": 1.0 / full})
print("press traces residual MLP: %.2f ms/step, %.1f steps/s, wall %.1f s"
      % (full * 1e3, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    one = next(iter(make_dataset(x, y)))
    compute = run(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
