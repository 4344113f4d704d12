"""County-level crop-yield regression from weather and soil features.
Keeps a per-batch history of the weights for later trajectory plots."""

import argparse
import json
import os
import time

import numpy as np
import keras
import tensorflow as tf

N_ROWS = 16384
N_FEATURES = 48
BATCH_SIZE = 256
STEPS = 150


def synth_counties(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N_ROWS, N_FEATURES)).astype(np.float32)
    y = (x[:, :6].sum(1) - 0.5 * x[:, 6] ** 2 + rng.normal(0, 0.3, N_ROWS)).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


class WeightHistory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append(self.model.get_weights())


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        return float(np.mean(np.diff(self.stamps)[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def run(ds):
    model = build_model()
    timer, history = StepTimer(), WeightHistory()
    model.fit(ds, epochs=1, steps_per_epoch=STEPS, callbacks=[timer, history], verbose=0)
    mb = sum(w.nbytes for snap in history.snapshots for w in snap) / 2**20
    print(f"kept {len(history.snapshots)} weight snapshots ({mb:.0f} MiB)")
    return timer.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x, y = synth_counties()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_ROWS).repeat().batch(BATCH_SIZE)
    full = run(ds.prefetch(tf.data.AUTOTUNE))
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        compute = run(tf.data.Dataset.from_tensors((x[:BATCH_SIZE], y[:BATCH_SIZE])).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
