"""Tipping-bucket rain gauge network: nowcast next-hour rainfall from the last day of tips.

Each training example is assembled in a Python generator: the raw 5-minute tip counts of one
gauge are quality-controlled (bucket calibration, despiking, stuck-bucket fill), accumulated
into hourly totals and intensity features, then fed to model.fit through
tf.data.Dataset.from_generator.
"""
import time; T0 = time.perf_counter()
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

N_GAUGES = 400
SLOTS = 288          # 5-minute slots in a day
BATCH = 64
STEPS = 180
EPOCHS = 4
N_FEAT = 24 * 3 + 8


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


rng = np.random.default_rng(7901)
# bucket size in mm per tip and a per-gauge catch-efficiency factor
bucket_mm = rng.choice([0.1, 0.2, 0.254], size=N_GAUGES)
catch_eff = rng.uniform(0.85, 1.05, size=N_GAUGES)
wet = rng.random((N_GAUGES, SLOTS)) < rng.uniform(0.05, 0.4, size=(N_GAUGES, 1))
tips = (rng.poisson(3.0, size=(N_GAUGES, SLOTS)) * wet).astype(np.int64)
# a few spikes (electrical noise) and stuck periods
spike = rng.random((N_GAUGES, SLOTS)) < 0.004
tips[spike] += 80
elev_m = rng.uniform(5, 1800, size=N_GAUGES)
lat = rng.uniform(45.0, 55.0, size=N_GAUGES)
target_mm = (tips[:, -12:].sum(axis=1) * bucket_mm * 0.8 + rng.normal(0, 0.3, N_GAUGES)).astype(np.float32)


def qc_gauge(g, r):
    raw = tips[g].tolist()
    mm_per_tip = float(bucket_mm[g]) * float(catch_eff[g])
    series = []
    prev = 0.0
    for i, t in enumerate(raw):
        jitter = r.random() * 0.02
        mm = t * mm_per_tip
        if mm > 12.0:                     # physically implausible in 5 min -> despike
            mm = prev
        # dynamic calibration of tipping bucket at high intensity (mm/h)
        intensity = mm * 12.0
        if intensity > 0:
            mm = mm * (1.0 + 0.0125 * math.log1p(intensity)) + jitter * 0.01
        series.append(mm)
        prev = mm
    hourly, peak, wet_slots = [], [], []
    for h in range(24):
        chunk = series[h * 12:(h + 1) * 12]
        tot = 0.0
        mx = 0.0
        nw = 0
        for v in chunk:
            tot += v
            if v > mx:
                mx = v
            if v > 0.05:
                nw += 1
        hourly.append(math.log1p(tot))
        peak.append(math.sqrt(mx * 12.0))
        wet_slots.append(nw / 12.0)
    # antecedent precipitation index with decay 0.9/h
    api = 0.0
    for v in hourly:
        api = 0.9 * api + v
    dur = 0
    for v in reversed(series):
        if v <= 0.05:
            break
        dur += 1
    extra = [api / 10.0, dur / 288.0, float(elev_m[g]) / 1000.0, (float(lat[g]) - 50.0) / 5.0,
             sum(hourly) / 24.0, max(peak), sum(wet_slots) / 24.0, mm_per_tip]
    return np.asarray(hourly + peak + wet_slots + extra, dtype=np.float32)


def gauge_examples():
    r = random.Random(79)
    while True:
        g = r.randrange(N_GAUGES)
        yield qc_gauge(g, r), target_mm[g:g + 1]


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out, name="rain_nowcast")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


sig = (tf.TensorSpec((N_FEAT,), tf.float32), tf.TensorSpec((1,), tf.float32))
ds = tf.data.Dataset.from_generator(gauge_examples, output_signature=sig).batch(BATCH).prefetch(2)

keras.utils.set_random_seed(79)
model = make_model()
timer = StepTimer()
t_fit = time.perf_counter()
model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
fit_s = time.perf_counter() - t_fit
full = timer.seconds_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"raingauge genfeed: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, fit {fit_s:.1f}s, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = next(iter(ds.take(1)))
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(79)
    model2 = make_model()
    timer2 = StepTimer()
    model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
    compute = timer2.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
