"""Portfolio risk: next-day volatility regressor, self-attention over asset returns, GradientTape loop.

Bottleneck (compute): batches are pre-built tensors held in a Python list; the tf.function train
step runs several multi-head self-attention blocks over (days x assets) sequences, which dominates.
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

SEED = 6508
N_BATCHES = 16
BATCH = 32
DAYS = 64
ASSETS = 24
DIM = 64
STEPS = 45


def make_batches(rng):
    out = []
    for _ in range(N_BATCHES):
        vol = rng.uniform(0.005, 0.04, (BATCH, 1, ASSETS)).astype(np.float32)
        r = (rng.standard_t(4, (BATCH, DAYS, ASSETS)) * vol).astype(np.float32)
        y = np.log(np.std(r[:, -20:, :], axis=1).mean(axis=1, keepdims=True) + 1e-4).astype(np.float32)
        out.append((tf.constant(r * 50.0), tf.constant(y)))
    return out


def build_model():
    inp = keras.Input((DAYS, ASSETS))
    x = keras.layers.Dense(DIM)(inp)
    for _ in range(2):
        a = keras.layers.MultiHeadAttention(num_heads=8, key_dim=DIM // 8)(x, x)
        x = keras.layers.LayerNormalization()(x + a)
        f = keras.layers.Dense(DIM * 4, activation="gelu")(x)
        x = keras.layers.LayerNormalization()(x + keras.layers.Dense(DIM)(f))
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(1)(x))


def train(model, get_batch):
    opt = keras.optimizers.Adam(3e-4)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = None
    for s in range(STEPS):
        x, y = get_batch(s)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    batches = make_batches(np.random.default_rng(SEED))

    keras.utils.set_random_seed(SEED)
    full, loss = train(build_model(), lambda s: batches[s % N_BATCHES])
    emit({"steps_per_second": 1.0 / full})
    print(f"[portfoliorisk] attention tape loop: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"loss {loss:.4f}, wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        keras.utils.set_random_seed(SEED)
        comp, _ = train(build_model(), lambda s: batches[0])
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[portfoliorisk] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
