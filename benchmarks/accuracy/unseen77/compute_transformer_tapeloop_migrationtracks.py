"""Migratory-ungulate route prediction, compute-bound GradientTape loop (u77).

Domain: satellite-tagged wildebeest and zebra in a transboundary conservation
area; daily-fix sequences (64 days x 16 covariates: displacement, NDVI,
rainfall, distance to water...) are classified into 6 migration corridors.
Data path: all sequences generated once as tf tensors; split once into 32
pre-built batch tensors; each step picks the next one (no Python data work) -> tf.function
GradientTape step; loss fetched with float() every step.
Deliberate bottleneck: the transformer encoder (attention + MLP) compute.
"""
import time

_WALL0 = time.perf_counter()

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


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
SCRIPT = "compute_transformer_tapeloop_migrationtracks"
BATCH = 32
STEPS = 45
SEQ = 64
FEAT = 16
DM = 128
N = 1024


def encoder_block(x):
    a = keras.layers.MultiHeadAttention(num_heads=4, key_dim=32)(x, x)
    x = keras.layers.LayerNormalization()(x + a)
    f = keras.layers.Dense(2 * DM, activation="gelu")(x)
    f = keras.layers.Dense(DM)(f)
    return keras.layers.LayerNormalization()(x + f)


def build_model():
    inp = keras.Input((SEQ, FEAT))
    x = keras.layers.Dense(DM)(inp)
    for _ in range(1):
        x = encoder_block(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(6)(x))


def train(batch_at):
    keras.utils.set_random_seed(77)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for i in range(STEPS):
        x, y = batch_at(i)
        loss = float(step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return _sec_per_step(gaps), loss


def main():
    args = _args()
    rng = np.random.default_rng(7708)
    y_np = rng.integers(0, 6, N).astype(np.int32)
    x_np = rng.normal(0, 1, (N, SEQ, FEAT)).astype(np.float32)
    x_np[:, :, 0] += np.sin(np.linspace(0, 6, SEQ))[None] * (y_np[:, None] - 2.5) / 2
    X, Y = tf.constant(x_np), tf.constant(y_np)
    nb = N // BATCH
    xb, yb = tf.split(X, nb), tf.split(Y, nb)
    full, loss = train(lambda i: (xb[i % nb], yb[i % nb]))
    _mark()
    compute = None
    if args.truth:
        fx, fy = X[:BATCH], Y[:BATCH]
        compute, _ = train(lambda i: (fx, fy))
    _finish(SCRIPT, full, compute, "last loss %.3f" % loss)


if __name__ == "__main__":
    main()
