"""Wind-turbine fault detection from a simulated sensor stream.

A Python simulator emits one 12-channel reading per tick; a collections.deque
keeps the last WINDOW readings and every STRIDE ticks the window is copied out
as a training example.  Batches are assembled in Python and fed to a custom
tf.function training step.
"""
import argparse
import collections
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

CHANNELS = 12
WINDOW = 96
STRIDE = 5
BATCH = 64
STEPS = 1300


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class TurbineStream:
    """Physically-flavoured toy simulator: rotor harmonics + faults."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.fault = 0
        self.phase = self.rng.uniform(0, 2 * np.pi, CHANNELS)
        self.freq = self.rng.uniform(0.02, 0.2, CHANNELS)

    def tick(self):
        self.t += 1
        if self.rng.random() < 0.01:
            self.fault = 1 - self.fault
        base = np.sin(self.freq * self.t + self.phase)
        if self.fault:
            base = base + 0.6 * np.sin(3.1 * self.freq * self.t)
        reading = base + self.rng.normal(0, 0.2, CHANNELS)
        return reading.astype(np.float32), self.fault


def batches(seed):
    stream = TurbineStream(seed)
    window = collections.deque(maxlen=WINDOW)
    xs, ys = [], []
    while True:
        reading, fault = stream.tick()
        window.append(reading)
        if len(window) == WINDOW and stream.t % STRIDE == 0:
            x = np.array(window)
            x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
            xs.append(x)
            ys.append(fault)
            if len(xs) == BATCH:
                yield np.stack(xs), np.array(ys, dtype=np.float32)[:, None]
                xs, ys = [], []


def build_model():
    return keras.Sequential([
        keras.Input((WINDOW, CHANNELS)),
        keras.layers.Conv1D(32, 5, activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(64, 5, activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(batch_source):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next(batch_source)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def repeat(batch):
    while True:
        yield batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    full, loss = train(batches(seed=7))
    report("steps_per_second", 1.0 / full)
    msg = f"turbine: {full * 1000:.1f} ms/step, final loss {loss:.3f}"
    if args.truth:
        fixed = next(batches(seed=8))
        compute, _ = train(repeat(fixed))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
