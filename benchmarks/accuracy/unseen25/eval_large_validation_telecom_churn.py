"""Telecom churn model validated every epoch on the full hold-out month of subscribers."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=4)
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--train-size", type=int, default=9_600)
parser.add_argument("--val-size", type=int, default=300_000)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_FEATURES = 64


def make_subscribers(n, rng):
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    logit = x[:, 0] - 0.8 * x[:, 1] + 0.5 * x[:, 2] * x[:, 3]
    y = (logit + rng.normal(scale=0.5, size=n) > 0.7).astype(np.float32)
    return x, y


rng = np.random.default_rng(4)
x_train, y_train = make_subscribers(args.train_size, rng)
x_val, y_val = make_subscribers(args.val_size, rng)

train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, y_train))
    .shuffle(4096)
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)
val_ds = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(1024)
steps_per_epoch = args.train_size // args.batch_size


def build_model():
    inputs = keras.Input((N_FEATURES,))
    x = inputs
    for units in (512, 512, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
        x = keras.layers.Dropout(0.1)(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="adam",
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc"), keras.metrics.Precision(), keras.metrics.Recall()],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []
        self.val_seconds = 0.0
        self.train_seconds = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])
        self._epoch_start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def on_test_begin(self, logs=None):
        self._val_start = time.perf_counter()
        self.train_seconds += self._val_start - self._epoch_start

    def on_test_end(self, logs=None):
        self.val_seconds += time.perf_counter() - self._val_start

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def train(ds):
    model = build_model()
    timer = StepTimer()
    t0 = time.perf_counter()
    model.fit(
        ds,
        validation_data=val_ds,
        epochs=args.epochs,
        steps_per_epoch=steps_per_epoch,
        callbacks=[timer],
        verbose=2,
    )
    after_first = time.perf_counter() - timer.stamps[0][0]
    print(
        f"fit {time.perf_counter() - t0:.1f}s, training {timer.train_seconds:.1f}s, "
        f"validation {timer.val_seconds:.1f}s "
        f"({100 * timer.val_seconds / after_first:.0f}% of time after first step)"
    )
    return timer.seconds_per_step()


full = train(train_ds)
report("steps_per_second", 1.0 / full)
summary = f"churn: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

if args.truth:
    batch = next(iter(train_ds))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
print(summary)
