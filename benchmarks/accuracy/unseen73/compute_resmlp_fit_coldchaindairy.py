"""Dairy cold chain: predicts remaining shelf life of chilled milk shipments
from reefer-truck sensor summaries.  Input path: features already in memory as
tensors -> from_tensor_slices -> cache -> batch -> prefetch, fed to model.fit.
Deliberate bottleneck: compute (a wide residual MLP)."""
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

BATCH = 64
EPOCHS = 3
STEPS = 40
FEATS = 96
N = BATCH * STEPS


def make_data(seed=77):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (N, FEATS)).astype(np.float32)
    w = rng.normal(0, 0.3, FEATS).astype(np.float32)
    y = (x @ w + 0.5 * np.tanh(x[:, 0] * x[:, 1])).astype(np.float32)[:, None]
    return x, y


def build_model():
    inp = keras.Input((FEATS,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    for _ in range(2):
        h = keras.layers.Dense(512, activation="relu")(x)
        h = keras.layers.Dense(512)(h)
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, h]))
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(3e-4), loss="mse")
    return m


def train(ds):
    keras.utils.set_random_seed(13)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    args = parse_args()
    x, y = make_data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(4096, seed=1).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[coldchaindairy] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[coldchaindairy] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
