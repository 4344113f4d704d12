"""Automotive: estimate EV battery state-of-health from charge-cycle telemetry windows.

Windows of BMS telemetry (voltage, current, temperature, SoC ... per time step) are
generated once into memory, pre-batched in NumPy, and fed as a cached, prefetched
tf.data pipeline of ready batches. A residual dilated Conv1D network does the heavy lifting, so the
step time is almost entirely model compute. model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
N_WIN = 2048
T = 128
F = 8
BATCH = 64
STEPS = 25
EPOCHS = 3


def make_data():
    rng = np.random.default_rng(57)
    soh = rng.uniform(0.7, 1.0, N_WIN).astype(np.float32)
    t = np.linspace(0, 1, T, dtype=np.float32)
    x = rng.normal(0, 0.05, (N_WIN, T, F)).astype(np.float32)
    x[:, :, 0] += 3.6 + 0.5 * t[None] * soh[:, None]
    x[:, :, 1] += np.sin(6 * t)[None] * (1.2 - soh[:, None])
    x[:, :, 2] += 25 + 10 * (1 - soh[:, None]) * t[None]
    return x, soh[:, None]


X, Y = make_data()


def make_dataset():
    # pre-batched in NumPy once, so tf.data only hands out ready (BATCH, T, F) blocks
    xb = X.reshape(N_WIN // BATCH, BATCH, T, F)
    yb = Y.reshape(N_WIN // BATCH, BATCH, 1)
    return tf.data.Dataset.from_tensor_slices((xb, yb)).cache().repeat().prefetch(2)


def build_model():
    inp = keras.Input((T, F))
    h = keras.layers.Conv1D(32, 1)(inp)
    for d in (1, 2, 4, 8, 16):
        r = keras.layers.Conv1D(32, 3, padding="causal", dilation_rate=d, activation="relu")(h)
        r = keras.layers.Conv1D(32, 3, padding="causal", dilation_rate=d)(r)
        h = keras.layers.Activation("relu")(keras.layers.Add()([h, r]))
    h = keras.layers.GlobalAveragePooling1D()(h)
    out = keras.layers.Dense(1)(keras.layers.Dense(64, activation="relu")(h))
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"compute_fit_conv1d_ev_battery: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    finish_truth(full, compute)
