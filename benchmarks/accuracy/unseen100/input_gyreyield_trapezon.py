import time; T0 = time.perf_counter()
"""Trapeze swing timing classifier.

Each training example is a simulated trapeze swing: a damped pendulum with a
flyer whose body shifts the centre of mass, integrated step by step in plain
Python.  From the simulated arc we sample the angle trace and label the swing
with the catch window (which of 8 beats the catcher should leave the board on).
The simulator is wrapped in a Python generator and fed to model.fit through
tf.data.Dataset.from_generator.
"""
import os
import sys
import json
import math
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
EPOCHS = 5
STEPS_PER_EPOCH = 190
TRACE_LEN = 64
SIM_STEPS = 560
N_WINDOWS = 8


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def simulate_swing(rng):
    """Integrate one swing of the fly bar; return (trace, catch window)."""
    length = rng.uniform(3.5, 5.5)          # rope length in metres
    damping = rng.uniform(0.01, 0.05)
    pump = rng.uniform(0.0, 0.4)            # flyer's kick strength
    theta = rng.uniform(0.6, 1.2)           # release angle from the board
    omega = 0.0
    g = 9.81
    dt = 0.01
    trace = []
    every = SIM_STEPS // TRACE_LEN
    peaks = 0
    prev_omega = omega
    for i in range(SIM_STEPS):
        # the flyer pumps at the back end of each swing
        kick = pump * math.copysign(1.0, omega) if abs(theta) < 0.15 else 0.0
        alpha = -(g / length) * math.sin(theta) - damping * omega + kick
        omega += alpha * dt
        theta += omega * dt
        if prev_omega > 0 >= omega or prev_omega < 0 <= omega:
            peaks += 1
        prev_omega = omega
        if i % every == 0:
            trace.append(theta)
    window = min(N_WINDOWS - 1, peaks + int(pump * 4)) % N_WINDOWS
    return trace[:TRACE_LEN], window


def swing_generator(seed):
    rng = random.Random(seed)
    while True:
        trace, window = simulate_swing(rng)
        yield np.asarray(trace, dtype=np.float32), np.int32(window)


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(TRACE_LEN,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(N_WINDOWS),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        lambda: swing_generator(seed),
        output_signature=(tf.TensorSpec((TRACE_LEN,), tf.float32),
                          tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(2)


def train(ds):
    timer = StepTimer()
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
              callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    keras.utils.set_random_seed(11)
    full = train(make_dataset(11))
    emit({"steps_per_second": 1.0 / full})
    print(f"[trapezon] generator swings: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(make_dataset(99)))
        keras.utils.set_random_seed(11)
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[trapezon] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
