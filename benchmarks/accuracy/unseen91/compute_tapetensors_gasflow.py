"""Glass furnace gas-flow meters -> burner air/fuel ratio forecaster.

Thermal-mass flow meters on the natural-gas and combustion-air lines of a
glassblowing studio's day tank and glory hole log at 1 Hz.  Windows are
synthesised once, converted to a list of pre-built tf tensors, and a custom
@tf.function GradientTape step trains a dilated temporal CNN + MLP head over
them.  The per-step Python work is just indexing a list: compute-bound.
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

WINDOW = 240
METERS = 6          # gas + air for day tank, glory hole, annealer burner
BATCH = 64
N_BATCHES = 24
STEPS = 340
HORIZON = 30


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def make_batches():
    r = np.random.default_rng(91)
    n = 20000
    t = np.arange(n)
    duty = (np.sin(t / 900.0) > -0.3).astype(np.float64)                  # gathers / reheats
    gas = 4.0 + 2.0 * duty[:, None] + 0.3 * np.sin(t / 37.0)[:, None] + r.normal(0, 0.15, (n, 3))
    air = gas * r.uniform(9.4, 10.2, 3) + r.normal(0, 0.8, (n, 3))
    flows = np.concatenate([gas, air], axis=1).astype(np.float32)
    flows = (flows - flows.mean(0)) / flows.std(0)
    ratio = (air / gas).mean(axis=1).astype(np.float32)
    batches = []
    for _ in range(N_BATCHES):
        starts = r.integers(0, n - WINDOW - HORIZON, BATCH)
        xb = np.stack([flows[s:s + WINDOW] for s in starts])
        yb = np.stack([ratio[s + WINDOW:s + WINDOW + HORIZON] for s in starts]) - 9.8
        batches.append((tf.constant(xb), tf.constant(yb)))
    return batches


def make_model():
    inp = keras.Input((WINDOW, METERS))
    x = keras.layers.Conv1D(48, 3, padding="causal", activation="relu")(inp)
    for d in (1, 2, 4, 8):
        h = keras.layers.Conv1D(48, 3, padding="causal", dilation_rate=d, activation="relu")(x)
        h = keras.layers.Conv1D(48, 1)(h)
        x = keras.layers.Add()([x, h])
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    return keras.Model(inp, keras.layers.Dense(HORIZON)(x))


def train(batches):
    keras.utils.set_random_seed(91)
    model = make_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


pre = make_batches()
full, last_loss = train(lambda step: pre[step % N_BATCHES])
emit({"steps_per_second": 1.0 / full})
print(f"gasflow: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, loss {last_loss:.4f}, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fx, fy = pre[0]
    compute, _ = train(lambda step: (fx, fy))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"gasflow: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
