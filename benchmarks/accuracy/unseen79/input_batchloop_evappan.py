"""Class-A evaporation pans: predict tomorrow's pan evaporation from 30 days of station weather.

Each batch is built in a Python loop: for every pan-site window the daily observations are
turned into Penman-style drivers (saturation vapour pressure, vapour-pressure deficit,
net-radiation estimate from sunshine hours, wind function, rain-overflow correction of the pan
reading), and the batch is passed to model.train_on_batch.
"""
import time; T0 = time.perf_counter()
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_SITES = 300
N_DAYS = 2000
WINDOW = 30
BATCH = 64
STEPS = 1700
N_FEAT = WINDOW * 6


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


rng = np.random.default_rng(7905)
doy = np.arange(N_DAYS) % 365
tmax = 22 + 10 * np.sin(2 * np.pi * (doy - 100) / 365) + rng.normal(0, 3, (N_SITES, N_DAYS))
tmin = tmax - rng.uniform(6, 14, (N_SITES, N_DAYS))
rh_mean = np.clip(60 + rng.normal(0, 15, (N_SITES, N_DAYS)), 10, 100)
wind_kmd = rng.gamma(4, 40, (N_SITES, N_DAYS))
sun_h = np.clip(rng.normal(8, 3, (N_SITES, N_DAYS)), 0, 14)
rain_mm = rng.gamma(0.3, 8, (N_SITES, N_DAYS))
lat_rad = np.radians(rng.uniform(-38, -12, N_SITES))
pan_mm = np.clip(0.25 * (tmax - 5) * (1 - rh_mean / 130) + wind_kmd / 200 + sun_h * 0.2
                 + rng.normal(0, 0.5, (N_SITES, N_DAYS)), 0, None)


def sat_vp(t):
    return 0.6108 * math.exp(17.27 * t / (t + 237.3))


def window_features(s, d0):
    feats = []
    phi = float(lat_rad[s])
    for d in range(d0, d0 + WINDOW):
        tx, tn = float(tmax[s, d]), float(tmin[s, d])
        es = 0.5 * (sat_vp(tx) + sat_vp(tn))
        ea = es * float(rh_mean[s, d]) / 100.0
        j = int(doy[d]) + 1
        dr = 1 + 0.033 * math.cos(2 * math.pi * j / 365)
        decl = 0.409 * math.sin(2 * math.pi * j / 365 - 1.39)
        ws = math.acos(max(-1.0, min(1.0, -math.tan(phi) * math.tan(decl))))
        ra = 37.6 * dr * (ws * math.sin(phi) * math.sin(decl) + math.cos(phi) * math.cos(decl) * math.sin(ws))
        n_max = 24 * ws / math.pi
        rs = (0.25 + 0.5 * float(sun_h[s, d]) / max(n_max, 1e-3)) * ra
        rnl = 4.903e-9 * (((tx + 273.16) ** 4 + (tn + 273.16) ** 4) / 2) * (0.34 - 0.14 * math.sqrt(ea)) \
            * (1.35 * min(rs / max(0.75 * ra, 1e-3), 1.0) - 0.35)
        rn = 0.77 * rs - rnl
        fu = 2.6 * (1 + 0.54 * float(wind_kmd[s, d]) / 86.4)
        pan = float(pan_mm[s, d])
        r = float(rain_mm[s, d])
        if r > 25.0:                       # pan overflowed: reading unreliable, use Penman estimate
            pan = 0.408 * rn * 0.3 + fu * (es - ea) * 0.2
        feats += [(es - ea) / 3.0, rn / 20.0, fu / 10.0, pan / 10.0, math.log1p(r) / 3.0, (tx + tn) / 60.0]
    return feats


def make_batch(step):
    x = np.empty((BATCH, N_FEAT), dtype=np.float32)
    y = np.empty((BATCH, 1), dtype=np.float32)
    for b in range(BATCH):
        k = (step * BATCH + b) * 2654435761
        s = k % N_SITES
        d0 = (k // N_SITES) % (N_DAYS - WINDOW - 1)
        x[b] = window_features(s, d0)
        y[b, 0] = pan_mm[s, d0 + WINDOW]
    return x, y


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Reshape((WINDOW, 6))(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x), name="pan_evap")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(batch_source):
    keras.utils.set_random_seed(79)
    model = make_model()
    stamps = []
    loss = None
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss


full, loss = train(make_batch)
emit({"steps_per_second": 1.0 / full})
print(f"evappan batchloop: {STEPS} steps, {full*1000:.1f} ms/step, loss {loss:.3f}, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = make_batch(0)
    compute, _ = train(lambda step: fixed)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
