"""Depot dock-door sensor windows -> door-state classifier.

Input path: all sensor windows (door contact, light curtain, vibration, temperature)
are synthesised once into tf.constant tensors; a Python loop slices pre-built batches
by index and calls a custom @tf.function GradientTape step.
Known bottleneck: the Conv1D network (compute-bound); batch slicing is nearly free.
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

N_BATCHES = 32
BATCH = 64
STEPS = 120
WINDOW = 256
CHANNELS = 8
N_STATES = 5   # closed, opening, open-loading, open-idle, fault


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def seconds_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_sensor_tensors():
    rng = np.random.default_rng(96)
    n = N_BATCHES * BATCH
    state = rng.integers(0, N_STATES, n)
    t = np.linspace(0, 1, WINDOW, dtype=np.float32)
    x = rng.normal(0, 0.1, (n, WINDOW, CHANNELS)).astype(np.float32)
    x[:, :, 0] += (state[:, None] >= 2) * 1.0                       # contact
    x[:, :, 1] += (state[:, None] == 1) * t[None, :]                 # opening ramp
    x[:, :, 2] += (state[:, None] == 2) * (rng.random((n, WINDOW)) < 0.2)  # light-curtain breaks
    x[:, :, 3] += (state[:, None] == 4) * np.sin(40 * t)[None, :]   # motor vibration
    xs = tf.constant(x.reshape(N_BATCHES, BATCH, WINDOW, CHANNELS))
    ys = tf.constant(state.reshape(N_BATCHES, BATCH).astype(np.int32))
    return xs, ys


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((WINDOW, CHANNELS))
    h = keras.layers.Conv1D(128, 7, padding="same", activation="relu")(inp)
    h = keras.layers.Conv1D(192, 5, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(256, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(N_STATES)(h)
    return keras.Model(inp, out)


def train(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    last = None
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return seconds_per_step(gaps), loss


XS, YS = make_sensor_tensors()
full, loss = train(lambda i: (XS[i % N_BATCHES], YS[i % N_BATCHES]))
emit({"steps_per_second": 1.0 / full})
print(f"dockdoors: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, loss {loss:.4f}, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    fx, fy = XS[0], YS[0]
    compute, _ = train(lambda i: (fx, fy))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"dockdoors truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
