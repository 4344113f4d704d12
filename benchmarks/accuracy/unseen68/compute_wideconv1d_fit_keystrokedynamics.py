"""Keystroke-dynamics user authentication (genuine user vs. impostor).

Compute-bound: in-memory float32 timing sequences (hold/flight times per key)
pre-batched in numpy and handed over by tf.data; a wide dilated Conv1D stack dominates each
step. Feeds model.fit.
"""
import time
WALL0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import keras

PARSER = argparse.ArgumentParser()
PARSER.add_argument("--truth", action="store_true",
                    help="also train on one cached batch and report the input fraction")
ARGS = PARSER.parse_args()
keras.utils.set_random_seed(68)


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


def finish(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    msg = f"[{name}] sec/step={full:.4f} steps/s={1.0 / full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute_sec/step={compute:.4f} truth_input_fraction={frac:.3f}"
    msg += extra + f" wall={time.perf_counter() - WALL0:.1f}s"
    print(msg, flush=True)
NAME = "compute_wideconv1d_fit_keystrokedynamics"
BATCH = 64
STEPS = 12
EPOCHS = 3
SEQ = 256
CH = 8
FILTERS = 40
N = 2048


def make_data():
    rng = np.random.default_rng(68)
    y = rng.integers(0, 2, N).astype(np.float32)
    hold = rng.gamma(4.0, 0.025, (N, SEQ)) * (1.0 + 0.3 * y[:, None])
    flight = rng.gamma(2.0, 0.06, (N, SEQ))
    keys = rng.integers(0, 6, (N, SEQ))
    x = np.zeros((N, SEQ, CH), np.float32)
    x[..., 0] = hold
    x[..., 1] = flight
    x[np.arange(N)[:, None], np.arange(SEQ)[None, :], 2 + keys] = 1.0
    return x, y.reshape(-1, 1)


def build_model():
    inp = keras.Input((SEQ, CH))
    x = keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu")(inp)
    for d in (1, 2, 4, 8):
        y = keras.layers.Conv1D(FILTERS, 5, dilation_rate=d, padding="same", activation="relu")(x)
        y = keras.layers.Conv1D(FILTERS, 1, activation="relu")(y)
        x = keras.layers.Add()([x, y])
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    x, y = make_data()
    # shuffle once in numpy and pre-batch, so tf.data only hands over ready tensors
    order = np.random.default_rng(1).permutation(N)
    nb = N // BATCH
    xb = x[order][:nb * BATCH].reshape(nb, BATCH, SEQ, CH)
    yb = y[order][:nb * BATCH].reshape(nb, BATCH, 1)
    ds = tf.data.Dataset.from_tensor_slices((xb, yb)).repeat().prefetch(2)
    full = train(ds)
    compute = None
    if ARGS.truth:
        compute = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat())
    finish(NAME, full, compute)


if __name__ == "__main__":
    main()
