"""Drying-oven (firing chamber) temperature logs -> exhaust moisture.

Logs of 8 thermocouples over 256 time steps are stacked once into tensors
before training; a custom @tf.function GradientTape step runs a Conv1D
stack over them, looping over the pre-built batches.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 40
EPOCHS = 6
T_STEPS = 256
PROBES = 8
FILTERS = 128


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def oven_logs(seed):
    rng = np.random.default_rng(seed)
    n = BATCH * STEPS
    t = np.linspace(0, 1, T_STEPS, dtype=np.float32)
    inlet = rng.uniform(95, 125, (n, 1, 1)).astype(np.float32)
    belt = rng.uniform(0.6, 1.4, (n, 1, 1)).astype(np.float32)
    depth = np.linspace(0, 1, PROBES, dtype=np.float32)[None, None, :]
    temps = inlet - 40 * depth * np.exp(-t[None, :, None] * belt) + rng.normal(0, 1.5, (n, T_STEPS, PROBES))
    moisture = 3.0 + 2.0 * (125 - inlet[:, 0, :]) / 30 + 1.5 * belt[:, 0, :]
    x = ((temps - 100.0) / 15.0).astype(np.float32)
    return tf.constant(x), tf.constant(moisture.astype(np.float32))


def build_model():
    keras.utils.set_random_seed(95)
    return keras.Sequential([
        keras.Input((T_STEPS, PROBES)),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for x, y in batches:
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


X, Y = oven_logs(71)
batches = [(X[i * BATCH:(i + 1) * BATCH], Y[i * BATCH:(i + 1) * BATCH]) for i in range(STEPS)]
full, loss = train(batches)
emit({"steps_per_second": 1.0 / full})
print("[firingtemps] normal run: %.4f s/step, %.2f steps/s, loss %.4f, wall %.1f s"
      % (full, 1.0 / full, loss, time.perf_counter() - T0))

if TRUTH:
    one = batches[0]
    compute, _ = train([one] * STEPS)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[firingtemps] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
