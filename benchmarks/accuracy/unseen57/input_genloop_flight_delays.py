"""Aviation: predict arrival delay (minutes) of scheduled flights.

A Python generator reads raw schedule/ops rows (CSV text as an airline ops feed would
export them), parses them with csv + datetime.strptime, hashes airports and carriers,
and builds cyclic time features. A custom GradientTape loop (the train step itself is a
tf.function) pulls each batch straight from that generator, so parsing is on the
critical path of every step.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
import csv
import datetime
import io
import zlib as _z

N_ROWS = 6000
BATCH = 256
STEPS = 100
EPOCHS = 3
HASH_BUCKETS = 64
AIRPORTS = ["JFK", "LAX", "ORD", "ATL", "DFW", "DEN", "SFO", "SEA", "MIA", "BOS", "LHR", "CDG", "FRA", "AMS", "DXB", "HND"]
CARRIERS = ["AA", "DL", "UA", "WN", "BA", "LH", "AF", "KL", "EK", "NH"]


def make_rows():
    rng = np.random.default_rng(57)
    base = datetime.datetime(2025, 1, 1)
    out = []
    for i in range(N_ROWS):
        dep = base + datetime.timedelta(minutes=int(rng.integers(0, 525600)))
        block = int(rng.integers(45, 700))
        arr = dep + datetime.timedelta(minutes=block)
        o, d = rng.choice(AIRPORTS, 2, replace=False)
        car = rng.choice(CARRIERS)
        delay = max(-20.0, rng.normal(5 + 12 * (dep.hour >= 17) + 8 * (o in ("ORD", "JFK")), 15))
        out.append(f"{car}{int(rng.integers(1, 9999))},{o},{d},{dep:%Y-%m-%dT%H:%M:%S},"
                   f"{arr:%Y-%m-%dT%H:%M:%S},{rng.choice(['A320', 'B738', 'B77W', 'A359', 'E190'])},"
                   f"{int(rng.integers(50, 400))},{rng.uniform(-10, 35):.1f},{delay:.1f}")
    return out


ROWS = make_rows()


def bucket(s):
    return _z.crc32(s.encode()) % HASH_BUCKETS


def parse_batch(lines):
    x = np.zeros((len(lines), 2 * HASH_BUCKETS + 12), np.float32)
    y = np.zeros((len(lines), 1), np.float32)
    for i, rec in enumerate(csv.reader(io.StringIO("\n".join(lines)))):
        flight, o, d, dep_s, arr_s, ac, seats, temp, delay = rec
        dep = datetime.datetime.strptime(dep_s, "%Y-%m-%dT%H:%M:%S")
        arr = datetime.datetime.strptime(arr_s, "%Y-%m-%dT%H:%M:%S")
        x[i, bucket(o)] = 1.0
        x[i, HASH_BUCKETS + bucket(d)] = 1.0
        h = dep.hour + dep.minute / 60.0
        doy = dep.timetuple().tm_yday
        x[i, -12:] = (np.sin(2 * np.pi * h / 24), np.cos(2 * np.pi * h / 24),
                      np.sin(2 * np.pi * doy / 365), np.cos(2 * np.pi * doy / 365),
                      dep.weekday() / 6.0, (arr - dep).total_seconds() / 36000.0,
                      int(seats) / 400.0, float(temp) / 30.0, bucket(flight[:2]) / HASH_BUCKETS,
                      bucket(ac) / HASH_BUCKETS, float(o in ("ORD", "JFK")), float(dep.hour >= 17))
        y[i, 0] = float(delay) / 30.0
    return x, y


def batches():
    rng = np.random.default_rng(3)
    while True:
        idx = rng.permutation(N_ROWS)
        for s in range(0, N_ROWS - BATCH + 1, BATCH):
            yield parse_batch([ROWS[k] for k in idx[s:s + BATCH]])


def build_model():
    return keras.Sequential([
        keras.Input((2 * HASH_BUCKETS + 12,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.Huber()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = next_batch()
            loss = float(step(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), loss


gen = batches()
full, loss = train(lambda: next(gen))
emit({"steps_per_second": 1.0 / full})
print(f"input_genloop_flight_delays: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, loss {loss:.3f}, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    xb, yb = next(batches())
    compute, _ = train(lambda: (xb, yb))
    finish_truth(full, compute)
