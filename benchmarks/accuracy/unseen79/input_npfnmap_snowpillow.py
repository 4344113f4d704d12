"""Snow pillow network: estimate next-week snowmelt runoff from a week of hourly pillow data.

The raw hourly pillow pressure, air temperature and snow depth of each station-week are
stored as one record; a tf.data pipeline maps each record through tf.numpy_function
(serial map, no parallel calls) that converts pressure to snow water equivalent,
temperature-compensates the load cell, removes spikes with a rolling median and computes
degree-day melt features. The batched dataset feeds model.fit.
"""
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

N_WEEKS = 4000
HOURS = 168
WIN = 7
BATCH = 64
STEPS = 160
EPOCHS = 4
N_FEAT = 7 * 6 + 4


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


rng = np.random.default_rng(7903)
hours = np.arange(HOURS)
air_t = (rng.uniform(-12, 4, (N_WEEKS, 1)) + 6 * np.sin(2 * np.pi * (hours - 9) / 24)
         + rng.normal(0, 1.0, (N_WEEKS, HOURS))).astype(np.float32)
swe0 = rng.uniform(50, 900, (N_WEEKS, 1))
melt = np.cumsum(np.clip(air_t, 0, None) * 0.15, axis=1)
pressure_kpa = ((swe0 - melt) * 0.00981 + rng.normal(0, 0.05, (N_WEEKS, HOURS))).astype(np.float32)
spikes = rng.random((N_WEEKS, HOURS)) < 0.01
pressure_kpa[spikes] += 3.0
depth_cm = ((swe0 - melt) / 3.2 + rng.normal(0, 2, (N_WEEKS, HOURS))).astype(np.float32)
raw = np.stack([pressure_kpa, air_t, depth_cm], axis=-1)          # (weeks, hours, 3)
runoff = (np.clip(air_t, 0, None).sum(axis=1) * 0.12 + rng.normal(0, 2, N_WEEKS)).astype(np.float32)


def pillow_features(rec):
    p, t, d = rec[:, 0].astype(np.float64), rec[:, 1].astype(np.float64), rec[:, 2].astype(np.float64)
    p = p - 0.002 * (t - 0.0)                   # load-cell temperature compensation
    swe = p / 0.00981                           # kPa -> mm of water
    padded = np.pad(swe, WIN // 2, mode="edge")   # rolling median despike
    clean = np.median(np.lib.stride_tricks.sliding_window_view(padded, WIN), axis=1)
    feats = []
    for day in range(7):
        sl = slice(day * 24, (day + 1) * 24)
        dd = np.clip(t[sl], 0, None).sum() / 24.0
        dens = np.clip(clean[sl] / np.maximum(d[sl] * 10.0, 1.0), 0, 1).mean()
        feats += [clean[sl].mean() / 500.0, (clean[sl][-1] - clean[sl][0]) / 50.0, dd / 5.0,
                  t[sl].min() / 10.0, t[sl].max() / 10.0, dens]
    feats += [clean[-1] / 500.0, (clean[-1] - clean[0]) / 100.0, d[-1] / 200.0, np.std(t) / 5.0]
    return np.asarray(feats, dtype=np.float32)


def parse(rec, y):
    x = tf.numpy_function(pillow_features, [rec], tf.float32)
    x.set_shape((N_FEAT,))
    return x, tf.reshape(y, (1,))


ds = (tf.data.Dataset.from_tensor_slices((raw, runoff))
      .shuffle(N_WEEKS, seed=79).repeat()
      .map(parse)
      .batch(BATCH)
      .prefetch(1))


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out, name="melt_runoff")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="huber")
    return m


keras.utils.set_random_seed(79)
model = make_model()
timer = StepTimer()
t_fit = time.perf_counter()
model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
fit_s = time.perf_counter() - t_fit
full = timer.seconds_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"snowpillow npfnmap: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, fit {fit_s:.1f}s, "
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
