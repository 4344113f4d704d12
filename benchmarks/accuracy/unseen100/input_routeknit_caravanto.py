import time; T0 = time.perf_counter()
"""Tour route delay predictor trained with train_on_batch.

The show's advance team plans a route of towns for each leg of the tour.  For
every training step the loop drafts a batch of candidate legs in Python:
towns with coordinates, great-circle distances between consecutive stops,
convoy travel times with a truck speed model, set-up windows and rest-day
rules.  The features go straight into model.train_on_batch, which learns how
many show days the leg will lose to delays.
"""
import os
import sys
import json
import math
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 800
STOPS = 22
N_FEATURES = 4 * STOPS + 8


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def haversine(a, b):
    lat1, lon1 = map(math.radians, a)
    lat2, lon2 = map(math.radians, b)
    h = (math.sin((lat2 - lat1) / 2) ** 2 +
         math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def draft_leg(rng):
    towns = [(rng.uniform(36, 58), rng.uniform(-8, 24)) for _ in range(STOPS)]
    # the advance team sorts the towns greedily by nearest neighbour
    route = [towns.pop(0)]
    while towns:
        here = route[-1]
        best = min(range(len(towns)), key=lambda i: haversine(here, towns[i]))
        route.append(towns.pop(best))
    feats = []
    late_days = 0.0
    clock = 0.0
    for i in range(STOPS):
        d = haversine(route[i - 1], route[i]) if i else 0.0
        # convoy: 40 trucks, speed drops on long hauls, hourly rest stops
        hours = 0.0
        remaining = d
        while remaining > 0:
            leg = min(remaining, 80.0)
            hours += leg / (62.0 - 0.02 * d) + 0.25
            remaining -= leg
        clock += hours + 9.0                      # rigging the big top
        if clock > 24.0 * (i + 1):
            late_days += 1.0
        feats.extend([route[i][0] / 60.0, route[i][1] / 30.0, d / 1000.0, hours / 24.0])
    rest = sum(1 for i in range(STOPS) if (i + 1) % 6 == 0)
    feats.extend([late_days / STOPS, rest / 3.0, clock / (24.0 * STOPS),
                  rng.random(), rng.random(), 0.0, 0.0, 1.0])
    return feats, late_days


def build_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        f, y = draft_leg(rng)
        xs.append(f)
        ys.append([y])
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(N_FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def run(fixed_batch=None):
    keras.utils.set_random_seed(14)
    model = build_model()
    rng = random.Random(14)
    gaps = []
    last = None
    for step in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(rng)
        else:
            x, y = fixed_batch
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


def main():
    full, loss = run()
    emit({"steps_per_second": 1.0 / full})
    print(f"[caravanto] route drafts: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, "
          f"loss {loss:.3f}, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        fixed = build_batch(random.Random(4321))
        compute, _ = run(fixed)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[caravanto] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
