"""Maritime: forecast berth/anchorage congestion at a container port.

Hourly port-state sequences (vessels at anchor, berth occupancy, crane moves, weather)
are pre-built as in-memory tf tensors, already batched. A custom GradientTape loop with a
tf.function train step runs a two-layer LSTM forecaster; the loop only indexes a list of
ready tensors, so each step is model compute.
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
N_BATCHES = 16
BATCH = 64
T = 48
F = 16
HORIZON = 24
STEPS = 30
EPOCHS = 3


def make_batches():
    rng = np.random.default_rng(57)
    out = []
    for b in range(N_BATCHES):
        base = rng.uniform(0, 1, (BATCH, 1, 1))
        t = np.arange(T + HORIZON)[None, :, None] / 24.0
        series = base + 0.3 * np.sin(2 * np.pi * t) + rng.normal(0, 0.05, (BATCH, T + HORIZON, F))
        x = tf.constant(series[:, :T].astype(np.float32))
        y = tf.constant(series[:, T:, 0].astype(np.float32))
        out.append((x, y))
    return out


BATCHES = make_batches()


def build_model():
    return keras.Sequential([
        keras.Input((T, F)),
        keras.layers.LSTM(64, return_sequences=True),
        keras.layers.LSTM(64),
        keras.layers.Dense(HORIZON),
    ])


def train(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    i = 0
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = get_batch(i)
            i += 1
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), loss


full, loss = train(lambda i: BATCHES[i % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print(f"compute_tapeloop_port_congestion: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, loss {loss:.4f}, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    xb, yb = BATCHES[0]
    compute, _ = train(lambda i: (xb, yb))
    finish_truth(full, compute)
