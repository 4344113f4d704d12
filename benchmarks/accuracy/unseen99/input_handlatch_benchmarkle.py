import time; T0 = time.perf_counter()
"""Benchmark-height levelling checks trained with model.train_on_batch.

Each step the loop simulates a batch of levelling runs between two bench
marks: backsight / foresight staff readings are written as field-book lines,
parsed back, reduced by the rise-and-fall method and summarised (reduced
levels resampled to 48 points, misclosure, run length).  The network predicts
whether the run closes within the 12 mm * sqrt(km) tolerance.
"""
import json
import math
import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SETUPS = 140
BATCH = 32
STEPS = 800
NPTS = 48


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def levelling_run(rng):
    start_bm = rng.uniform(20.0, 400.0)
    true_h = start_bm
    sigma = rng.choice([0.0006, 0.0015, 0.004])
    book = [f"BM START RL {start_bm:.3f}"]
    length_m = 0.0
    for s in range(SETUPS):
        dh = rng.gauss(0.0, 0.6)
        bs = rng.uniform(1.2, 3.6)
        fs = bs - dh
        true_h += dh
        sight = rng.uniform(20, 60)
        length_m += 2 * sight
        book.append(f"STN {s + 1:03d} BS {bs + rng.gauss(0, sigma):.4f} "
                    f"FS {fs + rng.gauss(0, sigma):.4f} DIST {sight:.1f}")
    book.append(f"BM END RL {true_h:.3f}")
    # reduce the field book
    rl = float(book[0].split()[-1])
    levels = [rl]
    dist = 0.0
    for line in book[1:-1]:
        tok = line.split()
        bs, fs, d = float(tok[3]), float(tok[5]), float(tok[7])
        diff = bs - fs
        rise, fall = (diff, 0.0) if diff >= 0 else (0.0, -diff)
        rl = rl + rise - fall
        dist += 2 * d
        levels.append(rl)
    known_end = float(book[-1].split()[-1])
    misclose = rl - known_end
    km = dist / 1000.0
    ok = abs(misclose) * 1000.0 <= 12.0 * math.sqrt(km)
    base = levels[0]
    feats = []
    for k in range(NPTS):
        pos = k * (len(levels) - 1) / (NPTS - 1)
        i = int(pos)
        j = min(i + 1, len(levels) - 1)
        feats.append((levels[i] + (levels[j] - levels[i]) * (pos - i) - base) / 5.0)
    feats += [misclose * 100.0, km, abs(misclose) * 1000.0 / (12.0 * math.sqrt(km))]
    return feats, int(ok)


def build_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        f, ok = levelling_run(rng)
        xs.append(f)
        ys.append(ok)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)


def build_model():
    keras.utils.set_random_seed(31)
    model = keras.Sequential([
        keras.Input((NPTS + 3,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(next_batch):
    model = build_model()
    gaps, last = [], None
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    gaps = gaps[5:] or gaps
    return sum(gaps) / len(gaps), loss


rng = random.Random(12)
full, loss = train(lambda: build_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"benchmarkle: train_on_batch loop {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    bx, by = build_batch(random.Random(13))
    compute, _ = train(lambda: (bx, by))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"benchmarkle: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
