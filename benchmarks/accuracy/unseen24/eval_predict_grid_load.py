"""Hourly electricity load forecasting for grid substations.

An MLP is trained on weather/calendar features with a custom loop, then the
model is scored on a full year of hourly data for every substation, with
error metrics accumulated batch by batch.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_FEATURES = 64
N_TRAIN = 200_000
N_SUBSTATIONS = 72
HOURS = 8760
BATCH_SIZE = 256
STEPS = 400
PRED_BATCH = 4096
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(99)
W_TRUE = rng.normal(size=(N_FEATURES,)).astype(np.float32)


def synth(n):
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    y = np.tanh(x @ W_TRUE / 4.0) * 50 + 100 + rng.normal(0, 3, size=n)
    return x, y.astype(np.float32)[:, None]


# ---------------------------------------------------------------- data
x_train, y_train = synth(N_TRAIN)
x_year, y_year = synth(N_SUBSTATIONS * HOURS)
print(f"train rows {N_TRAIN}, scoring rows {len(x_year)}")


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(N_FEATURES,))
    x = inputs
    for width in (512, 512, 256):
        x = keras.layers.Dense(width, activation="gelu")(x)
    outputs = keras.layers.Dense(1)(x)
    return keras.Model(inputs, outputs)


def train(get_batch, tag):
    model = build_model()
    optimizer = keras.optimizers.Adam(LR)
    loss_fn = keras.losses.Huber(delta=5.0)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step in range(STEPS):
        x, y = get_batch(step)
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if step % 100 == 0:
            print(f"[{tag}] step {step} loss {loss:.3f}")
    return model, times


def random_batch(step):
    idx = rng.integers(0, N_TRAIN, size=BATCH_SIZE)
    return x_train[idx], y_train[idx]


def score_year(model):
    preds = model.predict(x_year, batch_size=PRED_BATCH, verbose=0)
    abs_err = sq_err = ape = 0.0
    pinball = np.zeros(3)
    peak_hits = 0
    for start in range(0, len(x_year), PRED_BATCH):
        p = preds[start : start + PRED_BATCH]
        t = y_year[start : start + PRED_BATCH]
        e = t - p
        abs_err += np.abs(e).sum()
        sq_err += (e**2).sum()
        ape += (np.abs(e) / np.maximum(np.abs(t), 1e-3)).sum()
        for k, q in enumerate((0.1, 0.5, 0.9)):
            pinball[k] += np.maximum(q * e, (q - 1) * e).sum()
        peak_hits += int((np.argsort(p[:, 0])[-24:] == np.argsort(t[:, 0])[-24:]).sum())
    n = len(x_year)
    return {
        "mae": abs_err / n,
        "rmse": float(np.sqrt(sq_err / n)),
        "mape": 100 * ape / n,
        "pinball": (pinball / n).round(3).tolist(),
        "peak_hits": peak_hits,
    }


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


model, times = train(random_batch, "train")
t_eval = time.perf_counter()
metrics = score_year(model)
eval_time = time.perf_counter() - t_eval
train_time = times[-1] - times[0]
full = float(np.mean(np.diff(times)[4:]))
print("year metrics:", metrics)
print(
    f"training after first step {train_time:.1f}s, scoring {eval_time:.1f}s "
    f"({100 * eval_time / (eval_time + train_time):.0f}% of the time)"
)
write_out({"steps_per_second": 1.0 / full})
summary = f"grid load: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    fixed = random_batch(0)
    _, times = train(lambda step: fixed, "cached")
    compute = float(np.mean(np.diff(times)[4:]))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
