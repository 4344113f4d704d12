"""Radiosonde soundings -> thunderstorm-in-6h classifier.

A keras.utils.PyDataset (workers=1) builds each batch in __getitem__: every raw ascent is
interpolated onto standard pressure levels in pure Python, dewpoint is derived from relative
humidity (Magnus formula), and potential temperature, lapse rates and a parcel-buoyancy
integral are computed level by level.
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

N_SOUNDINGS = 3000
RAW_LEVELS = 130
STD_P = [1000, 975, 950, 925, 900, 850, 800, 750, 700, 650, 600, 550, 500, 450, 400,
         350, 300, 250, 200, 150, 100]
BATCH = 48
STEPS = 220
EPOCHS = 4
N_FEAT = len(STD_P) * 4 + 4


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


rng = np.random.default_rng(7902)
# raw ascents: pressure decreasing from ~1010 hPa to ~90 hPa, temperature with a noisy lapse rate
p_raw = np.sort(rng.uniform(90, 1012, size=(N_SOUNDINGS, RAW_LEVELS)), axis=1)[:, ::-1]
t_sfc = rng.uniform(-5, 33, size=(N_SOUNDINGS, 1))
z_km = 7.4 * np.log(1013.0 / p_raw)
temp_raw = t_sfc - rng.uniform(5.0, 8.5, size=(N_SOUNDINGS, 1)) * np.minimum(z_km, 11.5) \
    + rng.normal(0, 0.4, size=p_raw.shape)
rh_raw = np.clip(rng.uniform(40, 95, size=(N_SOUNDINGS, 1)) - 4.0 * z_km + rng.normal(0, 6, p_raw.shape), 2, 100)
storm = ((t_sfc[:, 0] > 18) & (rh_raw[:, :20].mean(axis=1) > 65)).astype(np.float32)
storm = np.where(rng.random(N_SOUNDINGS) < 0.1, 1 - storm, storm).astype(np.float32)


def interp_level(ps, vs, target):
    # ps decreasing
    for i in range(len(ps) - 1):
        if ps[i] >= target >= ps[i + 1]:
            w = (math.log(ps[i]) - math.log(target)) / (math.log(ps[i]) - math.log(ps[i + 1]) + 1e-9)
            return vs[i] + w * (vs[i + 1] - vs[i])
    return vs[0] if target > ps[0] else vs[-1]


def sounding_features(k):
    ps = p_raw[k].tolist()
    ts = temp_raw[k].tolist()
    rhs = rh_raw[k].tolist()
    tt, td, theta, lapse = [], [], [], []
    for p in STD_P:
        t = interp_level(ps, ts, p)
        rh = interp_level(ps, rhs, p)
        a, b = 17.625, 243.04
        gam = math.log(max(rh, 1.0) / 100.0) + a * t / (b + t)
        dew = b * gam / (a - gam)
        th = (t + 273.15) * (1000.0 / p) ** 0.2857
        tt.append(t / 30.0)
        td.append(dew / 30.0)
        theta.append((th - 300.0) / 30.0)
    for i in range(len(STD_P) - 1):
        lapse.append((tt[i] - tt[i + 1]) * 30.0 / 7.4 / max(math.log(STD_P[i] / STD_P[i + 1]), 1e-6) / 10.0)
    lapse.append(0.0)
    # crude parcel ascent from the surface: dry adiabat then 6 K/km moist
    t_par = ts[0]
    cape = 0.0
    cin = 0.0
    for i in range(1, len(ps)):
        dz = 7.4 * math.log(ps[i - 1] / ps[i])
        t_par -= (9.8 if t_par - td[0] * 30.0 > 0 else 6.0) * dz
        buoy = 9.81 * ((t_par + 273.15) - (ts[i] + 273.15)) / (ts[i] + 273.15)
        if buoy > 0:
            cape += buoy * dz * 1000.0
        elif cape == 0.0:
            cin += buoy * dz * 1000.0
    k_index = (tt[5] - tt[12]) * 30.0 + td[5] * 30.0 - (tt[8] - td[8]) * 30.0
    extra = [math.log1p(cape) / 8.0, math.log1p(-cin) / 8.0, k_index / 40.0, ts[0] / 30.0]
    return tt + td + theta + lapse + extra


class SoundingBatches(keras.utils.PyDataset):
    def __init__(self, order, **kwargs):
        super().__init__(**kwargs)
        self.order = order

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        ids = self.order[(idx * BATCH) % (len(self.order) - BATCH):][:BATCH]
        x = np.array([sounding_features(int(k)) for k in ids], dtype=np.float32)
        y = storm[ids].reshape(-1, 1)
        return x, y


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out, name="sounding_storm")
    m.compile(optimizer=keras.optimizers.Adam(5e-4), loss="binary_crossentropy")
    return m


order = rng.permutation(N_SOUNDINGS)
data = SoundingBatches(order, workers=1, use_multiprocessing=False)

keras.utils.set_random_seed(79)
model = make_model()
timer = StepTimer()
t_fit = time.perf_counter()
model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
fit_s = time.perf_counter() - t_fit
full = timer.seconds_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"radiosonde pyseq: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, fit {fit_s:.1f}s, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = data[0]
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(79)
    model2 = make_model()
    timer2 = StepTimer()
    model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
    compute = timer2.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
