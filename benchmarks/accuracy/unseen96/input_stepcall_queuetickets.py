"""Post-office queue tickets -> expected-wait regression.

Input path: a plain Python loop builds every batch by replaying each branch's ticket
log in Python (arrivals, counter service, per-ticket waits) and summarising it into a
feature vector, then calls model.train_on_batch.
Known bottleneck: Python queue replay per sample inside the loop (input-bound).
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

BATCH = 128
STEPS = 280
TICKETS = 90       # tickets replayed per branch sample
FEAT = 128
SERVICES = ["parcel_drop", "stamps", "id_check", "banking", "collect", "passport"]


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def seconds_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def replay_branch(rng):
    counters = int(rng.integers(1, 6))
    free_at = [0.0] * counters
    waits = []
    per_service = {s: [] for s in SERVICES}
    clock = 0.0
    for k in range(TICKETS):
        clock += float(rng.exponential(40.0))
        service = SERVICES[int(rng.integers(0, len(SERVICES)))]
        dur = float(rng.gamma(2.0, 60.0 + 30.0 * SERVICES.index(service)))
        c = min(range(counters), key=lambda j: free_at[j])
        start = max(clock, free_at[c])
        free_at[c] = start + dur
        waits.append(start - clock)
        per_service[service].append(start - clock)
    waits = np.array(waits, np.float32)
    hist = np.histogram(waits, bins=FEAT - 2 - 2 * len(SERVICES), range=(0, 1800))[0] / TICKETS
    svc = []
    for s in SERVICES:
        v = per_service[s]
        svc += [len(v) / TICKETS, (sum(v) / len(v) / 600.0) if v else 0.0]
    x = np.concatenate([hist, svc, [counters / 5.0, clock / 10000.0]]).astype(np.float32)
    # target: wait of the next ticket to arrive
    y = max(min(free_at) - (clock + 40.0), 0.0) / 600.0
    return x, y


def make_batch(rng):
    x = np.zeros((BATCH, FEAT), np.float32)
    y = np.zeros((BATCH, 1), np.float32)
    for i in range(BATCH):
        x[i], y[i, 0] = replay_branch(rng)
    return x, y


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(1024, activation="relu")(inp)
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(512, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def train(batch_source):
    model = build_model()
    gaps = []
    last = None
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return seconds_per_step(gaps), loss


rng = np.random.default_rng(96)
full, loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"queuetickets: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, loss {loss:.4f}, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    fixed = make_batch(np.random.default_rng(97))
    compute, _ = train(lambda: fixed)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"queuetickets truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
