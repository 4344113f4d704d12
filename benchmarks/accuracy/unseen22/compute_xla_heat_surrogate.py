"""Neural surrogate for a 2-D heat-diffusion solver, trained with an XLA-compiled custom loop."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=90)
parser.add_argument("--batch-size", type=int, default=256)
args = parser.parse_args()

GRID = 24
PARAMS = 6
NUM_SAMPLES = 4096
BATCH = args.batch_size
STEPS = args.steps

rng = np.random.default_rng(17)
params = rng.uniform(-1, 1, (NUM_SAMPLES, PARAMS)).astype(np.float32)
xs = np.linspace(0, 1, GRID, dtype=np.float32)
gx, gy = np.meshgrid(xs, xs)
fields = (
    np.stack(
        [
            np.exp(-((gx - 0.5 - 0.3 * p[0]) ** 2 + (gy - 0.5 - 0.3 * p[1]) ** 2) * (4 + 2 * p[2]))
            * (1 + 0.2 * p[3])
            for p in params
        ]
    )
    .reshape(NUM_SAMPLES, GRID * GRID)
    .astype(np.float32)
)

X = tf.constant(params)
Y = tf.constant(fields)


def build_model():
    inp = keras.Input((PARAMS,))
    x = keras.layers.Dense(1024, activation="gelu")(inp)
    for _ in range(4):
        h = keras.layers.Dense(1024, activation="gelu")(x)
        x = keras.layers.Add()([x, h])
        x = keras.layers.LayerNormalization()(x)
    out = keras.layers.Dense(GRID * GRID)(x)
    return keras.Model(inp, out)


def train(get_batch):
    keras.utils.set_random_seed(6)
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            mse = tf.reduce_mean(tf.square(pred - y))
            smooth = tf.reduce_mean(tf.square(pred[:, 1:] - pred[:, :-1]))
            loss = mse + 1e-3 * smooth
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    durations = []
    last = time.perf_counter()
    for step in range(STEPS):
        x, y = get_batch(step)
        loss = float(train_step(x, y))
        now = time.perf_counter()
        durations.append(now - last)
        last = now
        if step % 20 == 0:
            print(f"step {step}: loss={loss:.5f}")
    return float(np.mean(durations[5:]))


def slice_batch(step):
    start = (step * BATCH) % (NUM_SAMPLES - BATCH)
    return X[start : start + BATCH], Y[start : start + BATCH]


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(slice_batch)
append_out({"steps_per_second": 1.0 / full})
msg = f"heat surrogate: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
if args.truth:
    fixed = slice_batch(0)
    compute = train(lambda step: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
