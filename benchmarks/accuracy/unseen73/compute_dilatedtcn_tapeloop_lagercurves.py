"""Lager brewery: forecasts the next 12 hours of gravity drop from the past
fermentation curve (gravity, temperature, pressure).  Input path: all windows
pre-batched as tf tensors before training; a custom GradientTape loop indexes
them.  Deliberate bottleneck: compute (a stack of dilated causal Conv1D blocks)."""
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


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


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


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()

BATCH = 32
STEPS = 200
WIN = 128
CH = 3
HORIZON = 12
NBATCH = 20


def make_batches(seed=88):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(NBATCH):
        t = np.arange(WIN + HORIZON)[None, :] / 24.0
        k = rng.uniform(0.2, 0.6, (BATCH, 1))
        sg = np.exp(-k * t) + rng.normal(0, 0.01, (BATCH, WIN + HORIZON))
        temp = 0.3 * np.sin(t + rng.uniform(0, 6, (BATCH, 1)))
        pres = np.gradient(-sg, axis=1) * 50
        x = np.stack([sg, temp, pres], -1)[:, :WIN].astype(np.float32)
        y = sg[:, WIN:].astype(np.float32)
        out.append((tf.constant(x), tf.constant(y)))
    return out


def build_model():
    inp = keras.Input((WIN, CH))
    x = keras.layers.Conv1D(32, 1)(inp)
    for d in (1, 2, 4, 8, 16, 32):
        h = keras.layers.Conv1D(32, 3, padding="causal", dilation_rate=d, activation="relu")(x)
        h = keras.layers.Conv1D(32, 1)(h)
        x = keras.layers.Add()([x, h])
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(HORIZON)(x)
    return keras.Model(inp, out)


def train(batch_at):
    keras.utils.set_random_seed(14)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for s in range(STEPS):
        x, y = batch_at(s)
        loss = float(step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    args = parse_args()
    batches = make_batches()
    full, loss = train(lambda s: batches[s % NBATCH])
    emit({"steps_per_second": 1.0 / full})
    print(f"[lagercurves] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, loss {loss:.4f}, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        one = batches[0]
        compute, _ = train(lambda s: one)
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[lagercurves] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
