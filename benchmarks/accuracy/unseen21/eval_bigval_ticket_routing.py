"""Customer-support ticket routing (token ids -> queue) with a large held-out validation set."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

VOCAB = 20000
SEQ = 100
NUM_QUEUES = 16
N_TRAIN = 1600
N_VAL = 32000


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
        self.eval_seconds = 0.0
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

    def on_test_begin(self, logs=None):
        self._test_start = time.perf_counter()

    def on_test_end(self, logs=None):
        self.eval_seconds += time.perf_counter() - self._test_start

    def on_train_end(self, logs=None):
        self.after_first = time.perf_counter() - self.first_step_end

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def make_tickets(n, seed):
    rng = np.random.default_rng(seed)
    queue = rng.integers(0, NUM_QUEUES, n).astype(np.int32)
    tokens = rng.integers(1, VOCAB, (n, SEQ)).astype(np.int32)
    keywords = 100 + queue[:, None] * 50 + rng.integers(0, 50, (n, 12))
    tokens[:, :12] = keywords
    return tokens, queue


x_train, y_train = make_tickets(N_TRAIN, 0)
x_val, y_val = make_tickets(N_VAL, 1)
train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, y_train))
    .cache()
    .shuffle(N_TRAIN)
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)
val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(args.batch_size).cache()
steps_per_epoch = N_TRAIN // args.batch_size


def build_model():
    inputs = keras.Input((SEQ,), dtype="int32")
    x = layers.Embedding(VOCAB, 64)(inputs)
    x = layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = layers.GlobalMaxPooling1D()(x)
    x = layers.Dense(128, activation="relu")(x)
    outputs = layers.Dense(NUM_QUEUES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(dataset, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(
        dataset,
        validation_data=val_ds,
        epochs=args.epochs,
        steps_per_epoch=steps,
        callbacks=[timer],
        verbose=2,
    )
    return timer


timer = train(train_ds)
full = timer.seconds_per_step()
print(
    f"train {full * 1000:.1f} ms/step; validation {timer.eval_seconds:.1f}s of "
    f"{timer.after_first:.1f}s after first step ({timer.eval_seconds / timer.after_first:.0%})"
)
report("steps_per_second", 1.0 / full)

if args.truth:
    fixed_batch = next(iter(train_ds))
    compute = train(
        tf.data.Dataset.from_tensors(fixed_batch).repeat(), steps=steps_per_epoch
    ).seconds_per_step()
    frac = min(1.0, max(0.0, (full - compute) / full))
    report("truth_input_fraction", frac)
    print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")

print(f"done: {args.epochs} epochs x {steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
