"""Reservoir operations: forecast 7-day inflow to a reservoir from upstream gauges and weather.

Sixty-day windows of upstream river-gauge discharge, basin rainfall, snowmelt index and
release schedule are generated and converted to a list of batch tensors before training; a
custom @tf.function GradientTape loop then trains a GRU encoder over those pre-built tensors.
"""
import time; T0 = time.perf_counter()
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

WINDOW = 60
N_INPUTS = 8
BATCH = 64
N_BATCHES = 40
STEPS = 200


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


rng = np.random.default_rng(7908)
n = BATCH * N_BATCHES
rain = rng.gamma(0.4, 5, (n, WINDOW, 1))
upstream = np.cumsum(rng.normal(0, 1, (n, WINDOW, 5)), axis=1) * 0.1 + 0.3 * np.cumsum(rain, axis=1) / WINDOW
melt = np.clip(rng.normal(0, 1, (n, WINDOW, 1)), 0, None)
release = rng.uniform(0.2, 1.0, (n, WINDOW, 1))
x_np = np.concatenate([upstream, rain / 10, melt, release], axis=-1).astype(np.float32)
y_np = (upstream[:, -7:, :].mean(axis=(1, 2))[:, None] + rng.normal(0, 0.1, (n, 1))).astype(np.float32)
batches = [(tf.constant(x_np[i * BATCH:(i + 1) * BATCH]), tf.constant(y_np[i * BATCH:(i + 1) * BATCH]))
           for i in range(N_BATCHES)]


def make_model():
    inp = keras.Input(shape=(WINDOW, N_INPUTS))
    x = keras.layers.GRU(192, return_sequences=True)(inp)
    x = keras.layers.GRU(192)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(1)(x), name="inflow_gru")


def train(batch_source):
    keras.utils.set_random_seed(79)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = None
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss


full, loss = train(lambda step: batches[step % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print(f"reservoir tensorloop: {STEPS} steps, {full*1000:.1f} ms/step, loss {loss:.4f}, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = batches[0]
    compute, _ = train(lambda step: fixed)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
