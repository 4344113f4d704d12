"""Wind-farm turbine power-curve regression; keeps probe predictions per batch for plotting."""

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
parser.add_argument("--steps-per-epoch", type=int, default=50)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_SENSORS = 48
N_ROWS = 20000


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

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


class TrainingDynamics(keras.callbacks.Callback):
    """Tracks how the power curve and the weights evolve, to plot after training."""

    def __init__(self, probe_x):
        super().__init__()
        self.probe_x = probe_x
        self.curves = []
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        self.curves.append(self.model.predict_on_batch(self.probe_x))
        self.snapshots.append(self.model.get_weights())


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


rng = np.random.default_rng(12)
wind = rng.weibull(2.0, N_ROWS) * 9
x_all = rng.normal(size=(N_ROWS, N_SENSORS)).astype(np.float32)
x_all[:, 0] = wind
power = np.clip((wind - 3) ** 3 / (12 - 3) ** 3, 0, 1) * 3.6 + rng.normal(0, 0.05, N_ROWS)
y_all = power.astype(np.float32)
train_ds = (
    tf.data.Dataset.from_tensor_slices((x_all, y_all))
    .shuffle(N_ROWS)
    .repeat()
    .batch(args.batch_size)
    .prefetch(tf.data.AUTOTUNE)
)
probe = np.zeros((256, N_SENSORS), np.float32)
probe[:, 0] = np.linspace(0, 25, 256)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((N_SENSORS,)),
            layers.Dense(1536, activation="relu"),
            layers.Dense(1024, activation="relu"),
            layers.Dense(512, activation="relu"),
            layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


def train(dataset):
    model = build_model()
    timer = StepTimer()
    dynamics = TrainingDynamics(probe)
    model.fit(
        dataset,
        epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch,
        callbacks=[timer, dynamics],
        verbose=2,
    )
    print(f"kept {len(dynamics.snapshots)} snapshots; process RSS {rss_mib():.0f} MiB")
    return timer.seconds_per_step(), dynamics


full, dynamics = train(train_ds)
print(f"train: {full * 1000:.1f} ms/step")
report("steps_per_second", 1.0 / full)

if args.truth:
    del dynamics
    fixed_batch = next(iter(train_ds))
    compute, _ = train(tf.data.Dataset.from_tensors(fixed_batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    report("truth_input_fraction", frac)
    print(f"cached batch: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}")

print(f"done: {args.epochs} epochs x {args.steps_per_epoch} steps, {1.0 / full:.1f} steps/s")
