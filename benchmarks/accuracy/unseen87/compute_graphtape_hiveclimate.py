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


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Hive temperature and humidity probes: 8 probes across the brood nest, one
# reading every 5 minutes for a day (288 x 16 channels).  Batches are built
# once as tensors before training; a custom @tf.function GradientTape loop
# cycles over them and trains a Conv1D network that flags failed brood-nest
# thermoregulation.  Convolutions dominate each step.

T_STEPS = 288
CHANNELS = 16
BATCH = 64
N_BATCHES = 12
STEPS = 120
FILTERS = 128


def probe_days(rng, n):
    t = np.arange(T_STEPS) / 288.0
    ambient = 14 + 8 * np.sin(2 * np.pi * (t - 0.3))
    broodless = rng.random(n) < 0.3
    x = np.empty((n, T_STEPS, CHANNELS), np.float32)
    for i in range(n):
        centre = np.where(broodless[i], ambient + rng.uniform(5, 12), 34.8)
        for p in range(8):
            w = 1.0 - abs(p - 3.5) / 5.0
            temp = w * centre + (1 - w) * ambient + rng.normal(0, 0.25, T_STEPS)
            rh = 55 + 10 * (1 - w) + rng.normal(0, 2, T_STEPS)
            x[i, :, p] = (temp - 25.0) / 10.0
            x[i, :, 8 + p] = (rh - 60.0) / 15.0
    return x, broodless.astype(np.float32)[:, None]


def build_model():
    return keras.Sequential([
        keras.Input((T_STEPS, CHANNELS)),
        keras.layers.Conv1D(FILTERS, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(FILTERS, 7, padding="same", activation="relu"),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(FILTERS, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(1),
    ])


def make_step(model, opt):
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return train_step


def run(batches):
    keras.utils.set_random_seed(87)
    model = build_model()
    step_fn = make_step(model, keras.optimizers.Adam(1e-3))
    gaps, last, loss_val = [], None, float("nan")
    for s in range(STEPS):
        x, y = batches[s % len(batches)]
        loss_val = float(step_fn(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return seconds_per_step(gaps), loss_val


rng = np.random.default_rng(87)
prebuilt = []
for _ in range(N_BATCHES):
    xb, yb = probe_days(rng, BATCH)
    prebuilt.append((tf.constant(xb), tf.constant(yb)))
full, loss_val = run(prebuilt)
emit({"steps_per_second": 1.0 / full})
print(f"[hiveclimate] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"loss {loss_val:.3f}, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    fixed = [prebuilt[0]]
    compute, _ = run(fixed)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[hiveclimate] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
