"""Cultured dairy: predicts yogurt shelf-life class from fermentation and
packaging features.  Input path: in-memory tensors -> tf.data -> model.fit.
Deliberate bottleneck: evaluation - a callback scores the full plant-wide
holdout archive (predict + NumPy metrics) at every epoch end, which dominates
the wall time."""
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
EPOCHS = 2
STEPS = 30
FEATS = 64
HOLDOUT = 240000


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (n, FEATS)).astype(np.float32)
    score = x[:, :8].sum(1) + 0.5 * x[:, 8] * x[:, 9]
    y = np.digitize(score, [-2.0, 0.0, 2.0]).astype(np.int32)
    return x, y


class HoldoutScorer(StepTimer):
    """StepTimer plus an end-of-epoch full holdout evaluation (outside the step gaps)."""

    def __init__(self, xh, yh):
        super().__init__()
        self.xh, self.yh = xh, yh
        self.eval_seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        probs = self.model.predict(self.xh, batch_size=256, verbose=0)
        pred = probs.argmax(1)
        acc = float((pred == self.yh).mean())
        conf = np.zeros((4, 4), np.int64)
        np.add.at(conf, (self.yh, pred), 1)
        self.eval_seconds += time.perf_counter() - t
        self.last_acc = acc


def build_model():
    m = keras.Sequential([keras.Input((FEATS,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(4, activation="softmax")])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return m


def train(ds, xh, yh):
    keras.utils.set_random_seed(15)
    model = build_model()
    cb = HoldoutScorer(xh, yh)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps), cb.eval_seconds


def main():
    args = parse_args()
    x, y = make_data(BATCH * STEPS, 1)
    xh, yh = make_data(HOLDOUT, 2)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=3).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    full, ev = train(ds, xh, yh)
    wall = time.perf_counter() - _T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[yogurtshelflife] full run: {full * 1000:.1f} ms/step, eval {ev:.1f}s = {100 * ev / wall:.0f}% of wall {wall:.1f}s")
    if args.truth:
        batch = next(iter(ds))
        t = time.perf_counter()
        compute, ev2 = train(tf.data.Dataset.from_tensors(batch).repeat(), xh, yh)
        w2 = time.perf_counter() - t
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[yogurtshelflife] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, eval {ev2:.1f}s = {100 * ev2 / w2:.0f}% of that run")


if __name__ == "__main__":
    main()
