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

# Forage-distance GPS traces: harmonic-radar / micro-GPS tags on foragers give
# 180 fixes per trip.  A Python loop simulates each trip (out to a forage
# patch and back), converts every fix to distance-from-hive with a pure-Python
# haversine, derives speed and turning angle, resamples to 64 points and
# builds the batch; a custom @tf.function GradientTape step then learns the
# forage-patch distance band (near / mid / far / very far).

import math

HIVE_LAT, HIVE_LON = 51.4721, -0.9825
FIXES = 540
POINTS = 64
BATCH = 48
STEPS = 200
CLASSES = 4
HIDDEN = 1280
R_EARTH = 6371000.0


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dphi = p2 - p1
    dlmb = math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dlmb / 2) ** 2
    return 2 * R_EARTH * math.asin(math.sqrt(a))


def forage_trip(rng):
    band = int(rng.integers(CLASSES))
    dist = rng.uniform(*[(100, 500), (500, 1500), (1500, 3000), (3000, 6000)][band])
    bearing = rng.uniform(0, 2 * math.pi)
    tgt_lat = HIVE_LAT + dist * math.cos(bearing) / 111320.0
    tgt_lon = HIVE_LON + dist * math.sin(bearing) / (111320.0 * math.cos(math.radians(HIVE_LAT)))
    jitter = rng.normal(0.0, 0.00004, (FIXES, 2))
    lat, lon = HIVE_LAT, HIVE_LON
    d_hive, speed, turn = [], [], []
    prev_heading = 0.0
    for k in range(FIXES):
        frac = k / (FIXES - 1)
        leg = 2 * frac if frac < 0.5 else 2 * (1 - frac)
        new_lat = HIVE_LAT + leg * (tgt_lat - HIVE_LAT) + jitter[k, 0]
        new_lon = HIVE_LON + leg * (tgt_lon - HIVE_LON) + jitter[k, 1]
        step = haversine(lat, lon, new_lat, new_lon)
        heading = math.atan2(new_lon - lon, new_lat - lat)
        turn.append(abs((heading - prev_heading + math.pi) % (2 * math.pi) - math.pi))
        prev_heading = heading
        speed.append(step / 2.0)  # one fix every 2 s
        d_hive.append(haversine(HIVE_LAT, HIVE_LON, new_lat, new_lon))
        lat, lon = new_lat, new_lon
    idx = np.linspace(0, FIXES - 1, POINTS).astype(int)
    feats = np.stack([np.asarray(d_hive)[idx] / 1000.0,
                      np.asarray(speed)[idx] / 10.0,
                      np.asarray(turn)[idx]], axis=1)
    return feats.reshape(-1).astype(np.float32), band


def make_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        x, y = forage_trip(rng)
        xs.append(x)
        ys.append(y)
    return np.stack(xs), np.asarray(ys, np.int32)


def build_model():
    return keras.Sequential([
        keras.Input((POINTS * 3,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(CLASSES),
    ])


def make_step(model, opt):
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return train_step


def run(batch_source):
    keras.utils.set_random_seed(87)
    model = build_model()
    step_fn = make_step(model, keras.optimizers.Adam(3e-4))
    gaps, last, loss_val = [], None, float("nan")
    for _ in range(STEPS):
        x, y = batch_source()
        loss_val = float(step_fn(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return seconds_per_step(gaps), loss_val


rng = np.random.default_rng(87)
full, loss_val = run(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"[foragegps] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"loss {loss_val:.3f}, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    fixed = make_batch(np.random.default_rng(88))
    compute, _ = run(lambda: fixed)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[foragegps] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
