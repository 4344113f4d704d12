"""County-level crop-yield regression from weather, soil and satellite features.

Weights are recorded after every batch so that the training dynamics (weight
norms, update sizes) can be analysed after the run.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 96
N_SAMPLES = 64_000
BATCH_SIZE = 256
EPOCHS = 1
LR = 1e-3


def make_counties(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N_SAMPLES, N_FEATURES)).astype(np.float32)
    w = rng.normal(size=(N_FEATURES,)).astype(np.float32)
    y = (x @ w / 10.0 + np.sin(x[:, 0]) * 2 + rng.normal(0, 0.3, N_SAMPLES)).astype(np.float32)
    return x, y


def build_model():
    inp = keras.Input((N_FEATURES,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(LR), loss="mse", metrics=["mae"])
    return model


class WeightHistory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        self.history.append([w.copy() for w in self.model.get_weights()])


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations = []
        for times in self.epochs:
            durations.extend(np.diff(times).tolist())
        return float(np.mean(durations[skip:]))


def train(data, label, **fit_kwargs):
    model = build_model()
    history = WeightHistory()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[history, timer], verbose=2, **fit_kwargs)
    norms = [np.linalg.norm(snap[0]) for snap in history.history]
    mib = sum(w.nbytes for w in history.history[-1]) * len(history.history) / 2**20
    print(
        f"[{label}] recorded {len(history.history)} snapshots ({mib:.0f} MiB); "
        f"first-layer norm {norms[0]:.2f} -> {norms[-1]:.2f}"
    )
    return timer.seconds_per_step()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x, y = make_counties()
    train_ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(N_SAMPLES)
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    full = train(train_ds, "real")
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full={full * 1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(train_ds))
        steps = int(np.ceil(N_SAMPLES / BATCH_SIZE))
        compute = train(
            tf.data.Dataset.from_tensors(batch).repeat(), "cached", steps_per_epoch=steps
        )
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
    print(f"crop_yield: {summary} steps/s={1.0 / full:.2f}")


if __name__ == "__main__":
    main()
