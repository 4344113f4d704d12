"""Click-through-rate model on hashed ad features, checkpointing weights every epoch."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=70)
parser.add_argument("--steps-per-epoch", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_FIELDS = 26
HASH_BUCKETS = 1_000_000
N_ROWS = 8192


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None
        self.first_step_end = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.first_step_end is None:
            self.first_step_end = now
        if self._last is not None:
            self.durations.append(now - self._last)
        self._last = now

    def on_train_end(self, logs=None):
        self.after_first = time.perf_counter() - self.first_step_end

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


class SaveClock(keras.callbacks.Callback):
    """Placed around ModelCheckpoint to log how long the epoch-end save takes."""

    def __init__(self, shared, start):
        super().__init__()
        self.shared, self.start = shared, start

    def on_epoch_end(self, epoch, logs=None):
        now = time.perf_counter()
        if self.start:
            self.shared["t0"] = now
        else:
            self.shared["total"] = self.shared.get("total", 0.0) + now - self.shared["t0"]


rng = np.random.default_rng(4)
x_all = rng.integers(0, HASH_BUCKETS, size=(N_ROWS, N_FIELDS)).astype(np.int32)
y_all = ((x_all[:, 0] % 7 < 2) ^ (rng.random(N_ROWS) < 0.1)).astype(np.float32)
train_ds = (
    tf.data.Dataset.from_tensor_slices((x_all, y_all))
    .cache()
    .shuffle(N_ROWS)
    .repeat()
    .batch(args.batch_size)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((N_FIELDS,), dtype="int32"),
            layers.Embedding(HASH_BUCKETS, 16),
            layers.Flatten(),
            layers.Dense(1024, activation="relu"),
            layers.Dense(512, activation="relu"),
            layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="binary_crossentropy", metrics=["auc"])
    return model


def train(dataset, ckpt_dir):
    model = build_model()
    timer = StepTimer()
    shared = {}
    callbacks = [
        timer,
        SaveClock(shared, start=True),
        keras.callbacks.ModelCheckpoint(
            os.path.join(ckpt_dir, "ctr_latest.weights.h5"),
            save_weights_only=True,
            save_freq="epoch",
        ),
        SaveClock(shared, start=False),
    ]
    model.fit(
        dataset,
        epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch,
        callbacks=callbacks,
        verbose=0,
    )
    print(
        f"{model.count_params() / 1e6:.1f}M params; saving took {shared['total']:.1f}s of "
        f"{timer.after_first:.1f}s after first step ({shared['total'] / timer.after_first:.0%})"
    )
    return timer.seconds_per_step()


ckpt_dir = tempfile.mkdtemp(prefix="u21_checkpoint_ctr_")
try:
    full = train(train_ds, ckpt_dir)
    print(f"train: {full * 1000:.1f} ms/step")
    report("steps_per_second", 1.0 / full)
    if args.truth:
        fixed_batch = next(iter(train_ds))
        compute = train(tf.data.Dataset.from_tensors(fixed_batch).repeat(), ckpt_dir)
        frac = min(1.0, max(0.0, (full - compute) / full))
        report("truth_input_fraction", frac)
        print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")
    print(f"done: {args.epochs} epochs x {args.steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
finally:
    shutil.rmtree(ckpt_dir, ignore_errors=True)
