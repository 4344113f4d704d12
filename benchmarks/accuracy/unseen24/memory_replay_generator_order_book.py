"""Short-horizon mid-price direction from limit order book snapshots.

A generator simulates windows of order book features (10 levels x bid/ask x
price/size); every batch is also kept in a replay list so that hard windows
can be replayed in a second phase. A temporal CNN predicts whether the mid
price moves up, down or stays flat.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

WINDOW = 100
N_FEATURES = 40
BATCH_SIZE = 256
STEPS = 320
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

REPLAY_BUFFER = []  # batches kept for the hard-example replay phase


def order_book_batches(seed):
    gen = np.random.default_rng(seed)
    while True:
        mid = np.cumsum(gen.normal(0, 0.01, size=(BATCH_SIZE, WINDOW + 10)), axis=1) + 100.0
        spreads = np.abs(gen.normal(0.02, 0.005, size=(BATCH_SIZE, WINDOW, 1)))
        levels = np.arange(10)[None, None, :] * 0.01
        bids = mid[:, :WINDOW, None] - spreads / 2 - levels
        asks = mid[:, :WINDOW, None] + spreads / 2 + levels
        sizes = gen.gamma(2.0, 50.0, size=(BATCH_SIZE, WINDOW, 20))
        x = np.concatenate(
            [bids - mid[:, :WINDOW, None], asks - mid[:, :WINDOW, None], sizes / 100], -1
        )
        move = mid[:, WINDOW + 9] - mid[:, WINDOW - 1]
        y = np.where(move > 0.01, 2, np.where(move < -0.01, 0, 1)).astype(np.int32)
        x = x.astype(np.float32)
        REPLAY_BUFFER.append((x, y))
        yield x, y


def build_model():
    inputs = keras.Input(shape=(WINDOW, N_FEATURES))
    x = keras.layers.Conv1D(64, 5, padding="causal", activation="relu")(inputs)
    x = keras.layers.Conv1D(64, 5, strides=2, padding="causal", activation="relu")(x)
    x = keras.layers.Conv1D(96, 3, strides=2, padding="causal", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        d = np.concatenate([np.diff(e) for e in self.epochs if len(e) > 1])
        return float(np.mean(d[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=STEPS, epochs=1, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


full = train(order_book_batches(seed=0))
mb = sum(x.nbytes + y.nbytes for x, y in REPLAY_BUFFER) / 2**20
print(f"replay buffer: {len(REPLAY_BUFFER)} batches, {mb:.0f} MiB")
write_out({"steps_per_second": 1.0 / full})
summary = f"order book: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = next(order_book_batches(seed=1))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
