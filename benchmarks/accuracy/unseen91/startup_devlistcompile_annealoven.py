"""Glass annealing-oven schedules: model setup only (no training).

A studio's annealer controller app starts up: it imports TensorFlow, lists
the devices, builds and compiles two models (a schedule-segment regressor
that predicts soak/ramp times from piece thickness and glass COE, and a
stress-risk classifier over the oven's thermocouple trace) and runs one
predict to warm them up.  Nothing is trained and nothing is written to
ACCURACY_OUT: all of the wall time is start-up.
"""
import time; T0 = time.perf_counter()
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

devices = tf.config.list_physical_devices()
logical = tf.config.list_logical_devices()
print("devices:", [d.name for d in devices], "| logical:", len(logical))

SEGMENTS = 6      # ramp-up, anneal soak, slow cool 1, slow cool 2, fast cool, off


def schedule_model():
    piece = keras.Input((8,), name="piece")        # thickness, COE, mass, shape flags...
    x = keras.layers.Dense(256, activation="relu")(piece)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(SEGMENTS * 2, name="ramp_and_soak")(x)
    return keras.Model(piece, out, name="anneal_schedule")


def stress_model():
    trace = keras.Input((720, 3), name="oven_trace")
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(trace)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.Bidirectional(keras.layers.GRU(64))(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(trace, keras.layers.Dense(3, name="stress_risk")(x), name="stress_risk")


sched = schedule_model()
sched.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
stress = stress_model()
stress.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
               metrics=["accuracy"])

rng = np.random.default_rng(91)
pieces = rng.normal(size=(16, 8)).astype(np.float32)
traces = rng.normal(size=(4, 720, 3)).astype(np.float32)
plan = sched.predict(pieces, verbose=0)
risk = stress.predict(traces, verbose=0)
print(f"annealoven: startup only, {sched.count_params() + stress.count_params()} params, "
      f"plan {plan.shape}, risk {risk.shape}, wall {time.perf_counter() - T0:.1f}s")
