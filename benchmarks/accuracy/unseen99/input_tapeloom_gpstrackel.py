import time; T0 = time.perf_counter()
"""GPS track-log classifier trained with a custom GradientTape loop.

Every step the loop simulates a batch of field GPS logs as NMEA $GPRMC text,
parses them back (ddmm.mmmm to degrees), computes haversine segment lengths,
speeds and turning angles in Python, and histograms them.  The network learns
how the surveyor travelled (on foot, bicycle, vehicle, boat).
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

FIXES = 90
BATCH = 32
STEPS = 600
SPEED_MS = [1.3, 5.0, 14.0, 3.0]
NBIN = 16


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def nmea_coord(value, hemis):
    v = abs(value)
    deg = int(v)
    return f"{deg * 100 + (v - deg) * 60:.4f},{hemis[0] if value >= 0 else hemis[1]}"


def parse_coord(text, hemi):
    v = float(text)
    deg = int(v // 100)
    val = deg + (v - deg * 100) / 60.0
    return -val if hemi in "SW" else val


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371000.0 * math.asin(math.sqrt(min(1.0, a)))


def track_features(rng):
    mode = rng.randrange(4)
    lat, lon = 50 + rng.random() * 5, -4 + rng.random() * 4
    heading = rng.uniform(0, 360)
    lines = []
    for k in range(FIXES):
        speed = max(0.0, rng.gauss(SPEED_MS[mode], SPEED_MS[mode] * 0.3))
        heading += rng.gauss(0, 25 if mode in (0, 3) else 8)
        step = speed * 5.0
        lat += step * math.cos(math.radians(heading)) / 111320.0
        lon += step * math.sin(math.radians(heading)) / (111320.0 * math.cos(math.radians(lat)))
        hh, mm, ss = 9, (k * 5) // 60, (k * 5) % 60
        lines.append(f"$GPRMC,{hh:02d}{mm:02d}{ss:02d}.00,A,{nmea_coord(lat, 'NS')},"
                     f"{nmea_coord(lon, 'EW')},{speed * 1.9438:.1f},{heading % 360:.1f},150626,,,A*00")
    pts = []
    for line in lines:
        f = line.split(",")
        t = f[1]
        secs = int(t[0:2]) * 3600 + int(t[2:4]) * 60 + float(t[4:])
        pts.append((secs, parse_coord(f[3], f[4]), parse_coord(f[5], f[6])))
    speeds, turns = [], []
    prev_bearing = None
    for (t1, a1, o1), (t2, a2, o2) in zip(pts, pts[1:]):
        d = haversine(a1, o1, a2, o2)
        speeds.append(d / max(t2 - t1, 1e-3))
        b = math.degrees(math.atan2(o2 - o1, a2 - a1))
        if prev_bearing is not None:
            turns.append(abs((b - prev_bearing + 180) % 360 - 180))
        prev_bearing = b
    feat = [0.0] * (2 * NBIN)
    for s in speeds:
        feat[min(NBIN - 1, int(s))] += 1.0 / len(speeds)
    for a in turns:
        feat[NBIN + min(NBIN - 1, int(a / 6))] += 1.0 / len(turns)
    return feat, mode


def build_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        f, m = track_features(rng)
        xs.append(f)
        ys.append(m)
    return np.asarray(xs, np.float32), np.asarray(ys, np.int32)


def build_model():
    keras.utils.set_random_seed(21)
    return keras.Sequential([
        keras.Input((2 * NBIN,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(4),
    ])


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    gaps = gaps[5:] or gaps
    return sum(gaps) / len(gaps), loss


rng = random.Random(5)
full, loss = train(lambda: build_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"gpstrackel: custom loop {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    bx, by = build_batch(random.Random(6))
    compute, _ = train(lambda: (bx, by))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"gpstrackel: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
