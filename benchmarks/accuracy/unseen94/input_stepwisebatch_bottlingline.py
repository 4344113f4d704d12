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


def seconds_per_step(stamps):
    gaps = [b - a for a, b in zip(stamps[:-1], stamps[1:])]
    g = gaps[5:]
    return sum(g) / len(g)


# Bottling line counters: each PLC export line looks like
# "L2|2026-09-14T08:15:03|filler=1203|capper=1199|labeler=1190|rejects=4|tempC=17.9".
# A plain Python loop parses a batch of minute windows (strptime, split, dict
# building, deltas between consecutive counters) and calls model.train_on_batch
# to predict the next-minute reject rate.
import datetime
import random

LINES_PER_SAMPLE = 30
FEATS = 7
BATCH = 64
STEPS = 420
SEED = 94


def export_lines(rng):
    t = datetime.datetime(2026, 9, 14, 6, 0, 0) + datetime.timedelta(minutes=rng.randint(0, 600))
    filler = rng.randint(10000, 90000)
    jam = rng.random()
    out = []
    for i in range(LINES_PER_SAMPLE):
        t += datetime.timedelta(seconds=rng.randint(55, 65))
        rate = rng.randint(90, 130) if rng.random() > jam * 0.3 else rng.randint(0, 40)
        filler += rate
        out.append("L%d|%s|filler=%d|capper=%d|labeler=%d|rejects=%d|tempC=%.1f"
                   % (rng.randint(1, 3), t.strftime("%Y-%m-%dT%H:%M:%S"), filler,
                      filler - rng.randint(0, 6), filler - rng.randint(3, 15),
                      rng.randint(0, 3 + int(jam * 8)), 16.0 + rng.random() * 4))
    return out, jam


def parse_sample(lines):
    prev = None
    rows = []
    for ln in lines:
        parts = ln.split("|")
        ts = datetime.datetime.strptime(parts[1], "%Y-%m-%dT%H:%M:%S")
        kv = dict(p.split("=") for p in parts[2:])
        cur = (ts, int(kv["filler"]), int(kv["capper"]), int(kv["labeler"]),
               int(kv["rejects"]), float(kv["tempC"]), int(parts[0][1:]))
        if prev is None:
            prev = cur
        dt = max(1.0, (cur[0] - prev[0]).total_seconds())
        rows.append(((cur[1] - prev[1]) / dt, (cur[1] - cur[2]) / 10.0, (cur[1] - cur[3]) / 20.0,
                     cur[4] / 5.0, (cur[5] - 18.0) / 2.0, cur[6] / 3.0, dt / 60.0))
        prev = cur
    return rows


def next_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        lines, jam = export_lines(rng)
        xs.append(parse_sample(lines))
        ys.append(jam)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((LINES_PER_SAMPLE, FEATS)),
        keras.layers.LSTM(112),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(batch_source):
    model = build_model()
    stamps = []
    for i in range(STEPS):
        x, y = batch_source()
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return seconds_per_step(stamps), loss


rng = random.Random(SEED)
full, last = train(lambda: next_batch(rng))
emit({"steps_per_second": 1.0 / full})
print("bottling line train_on_batch: %.2f ms/step, %.1f steps/s, loss %.4f, wall %.1f s"
      % (full * 1e3, 1.0 / full, last, time.perf_counter() - T0))

if TRUTH:
    fixed = next_batch(random.Random(SEED + 1))
    compute, _ = train(lambda: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
