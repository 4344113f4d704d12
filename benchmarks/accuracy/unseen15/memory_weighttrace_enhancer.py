"""Enhancer activity prediction from one-hot DNA, keeping a per-step weight trace for later analysis.

Usage: python memory_weighttrace_enhancer.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf
from keras import layers

SEQ_LEN = 500
N_SEQ = 6000
N_TASKS = 8
BATCH_SIZE = 64
STEPS = 140
SEED = 23


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


class WeightTrace(keras.callbacks.Callback):
    """Records the weights after every optimisation step (used later for loss-landscape plots)."""

    def __init__(self):
        super().__init__()
        self.trace = []

    def on_train_batch_end(self, batch, logs=None):
        self.trace.append([w.copy() for w in self.model.get_weights()])


def make_sequences(rng):
    idx = rng.integers(0, 4, size=(N_SEQ, SEQ_LEN))
    onehot = np.eye(4, dtype=np.float32)[idx]
    motifs = rng.integers(0, 4, size=(N_TASKS, 10))
    y = np.zeros((N_SEQ, N_TASKS), dtype=np.float32)
    for i in range(N_SEQ):
        for task in rng.choice(N_TASKS, size=2, replace=False):
            pos = rng.integers(0, SEQ_LEN - 10)
            onehot[i, pos : pos + 10] = np.eye(4, dtype=np.float32)[motifs[task]]
            y[i, task] = 1.0
    return onehot, y


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN, 4))
    x = layers.Conv1D(128, 15, padding="same", activation="relu")(inputs)
    x = layers.MaxPooling1D(4)(x)
    x = layers.Conv1D(128, 9, padding="same", activation="relu")(x)
    x = layers.MaxPooling1D(4)(x)
    x = layers.Flatten()(x)
    x = layers.Dense(640, activation="relu")(x)
    x = layers.Dropout(0.2)(x)
    outputs = layers.Dense(N_TASKS, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs, name="enhancer_cnn")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc", multi_label=True)],
    )
    return model


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    trace = WeightTrace()
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[trace, clock], verbose=2)
    n_floats = sum(w.size for w in trace.trace[-1])
    print(f"weight trace: {len(trace.trace)} snapshots of {n_floats:,} values")
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    x, y = make_sequences(rng)
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(N_SEQ, seed=SEED)
        .repeat()
        .batch(BATCH_SIZE, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )

    full = train(ds)
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
