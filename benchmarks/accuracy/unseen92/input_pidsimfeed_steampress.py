import time; T0 = time.perf_counter()
# Steam press temperature traces: a pure-Python thermal simulation of the
# press head (PID heater control, steam bursts, garment load) produces each
# trace, a Python loop smooths and stacks them, and model.train_on_batch
# learns to flag traces that come within 8 C of the fabric's scorch limit.
import os
import sys
import json
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


BATCH = 48
STEPS = 300
T_LEN = 160


def press_trace(rnd):
    setpoint = rnd.choice([110.0, 150.0, 180.0, 200.0])  # silk, wool, cotton, linen
    kp, ki, kd = rnd.uniform(0.8, 2.5), rnd.uniform(0.01, 0.08), rnd.uniform(0.1, 0.6)
    temp, integ, prev_err = 25.0, 0.0, 0.0
    load = rnd.uniform(0.5, 1.5)
    trace, heater = [], []
    for k in range(T_LEN * 2):
        err = setpoint - temp
        integ = max(-400.0, min(400.0, integ + err))
        u = kp * err + ki * integ + kd * (err - prev_err)
        u = max(0.0, min(100.0, u))
        prev_err = err
        steam = 6.0 if (k % 37) < 3 else 0.0
        temp += 0.04 * u - 0.012 * (temp - 25.0) * load - steam * 0.3 + rnd.gauss(0, 0.15)
        trace.append(temp)
        heater.append(u)
    # smooth and decimate
    sm = []
    for k in range(0, len(trace), 2):
        lo, hi = max(0, k - 4), min(len(trace), k + 5)
        sm.append(sum(trace[lo:hi]) / (hi - lo))
    hd = [heater[k] for k in range(0, len(heater), 2)]
    scorch = float(max(trace) > setpoint - 8.0)  # within 8 C of the fabric limit
    x = np.stack([(np.asarray(sm) - setpoint) / 20.0, np.asarray(hd) / 100.0], axis=1)
    return x.astype(np.float32), scorch


def press_batch(rnd):
    xs, ys = zip(*(press_trace(rnd) for _ in range(BATCH)))
    return np.stack(xs), np.asarray(ys, np.float32)[:, None]


def make_model():
    inp = keras.Input(shape=(T_LEN, 2))
    x = keras.layers.Conv1D(96, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def train(next_batch):
    keras.utils.set_random_seed(4)
    model = make_model()
    gaps, last = [], None
    for step in range(STEPS):
        x, y = next_batch()
        logs = model.train_on_batch(x, y, return_dict=True)
        loss = float(logs["loss"])
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


rnd = random.Random(77)
full, last_loss = train(lambda: press_batch(rnd))
emit({"steps_per_second": 1.0 / full})
print(f"[steampress] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, loss {last_loss:.3f}, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = press_batch(random.Random(77))
    compute, _ = train(lambda: (xb, yb))
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[steampress] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
