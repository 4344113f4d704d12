"""Autoencoder for household smart-meter load profiles; keeps probe reconstructions per epoch."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=12)
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--train-size", type=int, default=6_400)
parser.add_argument("--probe-size", type=int, default=90_000)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

PROFILE = 288  # 5-minute readings over a day


def make_profiles(n, rng):
    t = np.arange(PROFILE) / PROFILE
    morning = np.exp(-((t - 0.3) ** 2) / 0.004)
    evening = np.exp(-((t - 0.78) ** 2) / 0.006)
    a = rng.uniform(0.2, 1.5, size=(n, 1))
    b = rng.uniform(0.5, 2.5, size=(n, 1))
    base = rng.uniform(0.1, 0.4, size=(n, 1))
    x = base + a * morning + b * evening + 0.05 * rng.standard_normal((n, PROFILE))
    return x.astype(np.float32)


rng = np.random.default_rng(12)
x_train = make_profiles(args.train_size, rng)
x_probe = make_profiles(args.probe_size, rng)
train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, x_train))
    .shuffle(4096)
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)
steps_per_epoch = args.train_size // args.batch_size


def build_model():
    inputs = keras.Input((PROFILE,))
    x = keras.layers.Dense(256, activation="relu")(inputs)
    x = keras.layers.Dense(64, activation="relu")(x)
    code = keras.layers.Dense(24, name="code")(x)
    x = keras.layers.Dense(64, activation="relu")(code)
    x = keras.layers.Dense(256, activation="relu")(x)
    outputs = keras.layers.Dense(PROFILE)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse")
    return model


class ProbeReconstructions(keras.callbacks.Callback):
    """Store reconstructions of the probe households each epoch to compare drift later."""

    def __init__(self, probe):
        super().__init__()
        self.probe = probe
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        recon = self.model.predict(self.probe, batch_size=2048, verbose=0)
        self.history.append(recon)
        err = float(np.mean((recon - self.probe) ** 2))
        print(f"  epoch {epoch + 1}: probe mse {err:.5f}, kept {len(self.history)} snapshots")


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

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
    probe_cb = ProbeReconstructions(x_probe)
    model.fit(
        ds,
        epochs=args.epochs,
        steps_per_epoch=steps_per_epoch,
        callbacks=[timer, probe_cb],
        verbose=2,
    )
    drift = np.mean(np.abs(probe_cb.history[-1] - probe_cb.history[0]))
    print(f"reconstruction drift first->last epoch: {drift:.4f}")
    return timer.seconds_per_step()


full = train(train_ds)
report("steps_per_second", 1.0 / full)
summary = f"grid load: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

if args.truth:
    batch = next(iter(train_ds))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
print(summary)
