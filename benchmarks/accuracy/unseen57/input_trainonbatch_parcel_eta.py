"""Logistics: estimate remaining hours to delivery for parcels from their scan history.

Each parcel is a JSON document of carrier scan events (hub, event code, ISO timestamp,
weight, service level) as a tracking API returns it. Every step the loop json.loads a
batch of documents, walks the events in Python (durations between scans, hub counts,
last-event one-hot) and calls model.train_on_batch on the result. Parsing happens
between train_on_batch calls, so the accelerator idles while Python decodes.
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
import datetime

N_PARCELS = 3000
BATCH = 384
STEPS = 60
EPOCHS = 3
HUBS = [f"HUB{i:02d}" for i in range(24)]
EVENTS = ["PICKUP", "ARRIVE_HUB", "DEPART_HUB", "CUSTOMS", "OUT_FOR_DELIVERY", "EXCEPTION"]
N_FEAT = len(HUBS) + len(EVENTS) + 10


def make_docs():
    rng = np.random.default_rng(57)
    t0 = datetime.datetime(2025, 6, 1, tzinfo=datetime.timezone.utc)
    docs, targets = [], []
    for p in range(N_PARCELS):
        t = t0 + datetime.timedelta(hours=float(rng.uniform(0, 2000)))
        n = int(rng.integers(4, 16))
        ev = []
        for k in range(n):
            t += datetime.timedelta(hours=float(rng.exponential(6)))
            ev.append({"hub": str(rng.choice(HUBS)), "code": str(rng.choice(EVENTS)),
                       "ts": t.isoformat(), "temp_c": round(float(rng.normal(20, 5)), 1)})
        svc = str(rng.choice(["express", "standard", "economy"]))
        docs.append(json.dumps({"parcel_id": f"P{p:07d}", "service": svc,
                                "weight_kg": round(float(rng.gamma(2, 2)), 2), "events": ev}))
        targets.append(float(rng.gamma(2, 10)) + 10 * (svc == "economy") - 0.5 * n)
    return docs, np.array(targets, np.float32)


DOCS, TARGETS = make_docs()
HUB_IDX = {h: i for i, h in enumerate(HUBS)}
EV_IDX = {e: i for i, e in enumerate(EVENTS)}


def featurize(doc):
    d = json.loads(doc)
    f = np.zeros(N_FEAT, np.float32)
    times = [datetime.datetime.fromisoformat(e["ts"]) for e in d["events"]]
    for e in d["events"]:
        f[HUB_IDX[e["hub"]]] += 1.0
    f[len(HUBS) + EV_IDX[d["events"][-1]["code"]]] = 1.0
    gaps = [(b - a).total_seconds() / 3600.0 for a, b in zip(times, times[1:])] or [0.0]
    base = len(HUBS) + len(EVENTS)
    f[base:base + 10] = (len(times) / 16.0, float(np.mean(gaps)) / 10.0, max(gaps) / 24.0,
                         (times[-1] - times[0]).total_seconds() / 360000.0,
                         d["weight_kg"] / 10.0, d["service"] == "express", d["service"] == "economy",
                         times[-1].hour / 24.0, times[-1].weekday() / 6.0,
                         sum(e["code"] == "EXCEPTION" for e in d["events"]) / 4.0)
    return f


def make_batch(rng):
    idx = rng.integers(0, N_PARCELS, BATCH)
    x = np.stack([featurize(DOCS[k]) for k in idx])
    return x, TARGETS[idx, None] / 30.0


def build_model():
    m = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(384, activation="relu"),
        keras.layers.Dense(192, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m


def train(get_batch):
    model = build_model()
    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = get_batch()
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), loss


rng = np.random.default_rng(7)
full, loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"input_trainonbatch_parcel_eta: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, loss {loss:.3f}, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    xb, yb = make_batch(np.random.default_rng(8))
    compute, _ = train(lambda: (xb, yb))
    finish_truth(full, compute)
