"""Creamery: classifies butter-churn phase (cream, foam, break, butter) from
torque/vibration spectrogram patches.  Input path: a Python generator via
tf.data.Dataset.from_generator.  Deliberate bottleneck: memory - the generator
keeps a float64 'audit copy' of every augmented batch in a module-level list
that is never trimmed, so RSS grows for the whole run."""
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

BATCH = 128
EPOCHS = 3
STEPS = 40
SIDE = 96
AUDIT_LOG = []   # the leak: grows by one float64 batch per step


def make_dataset(seed):
    def gen():
        rng = np.random.default_rng(seed)
        base = rng.normal(0, 1, (8, SIDE, SIDE)).astype(np.float32)
        while True:
            y = rng.integers(0, 4, BATCH)
            x = base[y] * rng.uniform(0.8, 1.2, (BATCH, 1, 1)).astype(np.float32)
            x = x + (y[:, None, None] * 0.1).astype(np.float32)
            AUDIT_LOG.append(x.astype(np.float64))   # "kept for the HACCP audit trail"
            yield x[..., None], y.astype(np.int32)
    sig = (tf.TensorSpec((BATCH, SIDE, SIDE, 1), tf.float32), tf.TensorSpec((BATCH,), tf.int32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).prefetch(1)


def build_model():
    m = keras.Sequential([keras.Input((SIDE, SIDE, 1)),
                          keras.layers.AveragePooling2D(4),
                          keras.layers.Conv2D(16, 3, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(4, activation="softmax")])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(17)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def rss_gib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024 / 1024
    return float("nan")


def main():
    args = parse_args()
    ds = make_dataset(seed=5)
    r0 = rss_gib()
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[butterchurns] full run: {full * 1000:.1f} ms/step, RSS {r0:.2f} -> {rss_gib():.2f} GiB, audit batches {len(AUDIT_LOG)}, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[butterchurns] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, RSS {rss_gib():.2f} GiB")


if __name__ == "__main__":
    main()
