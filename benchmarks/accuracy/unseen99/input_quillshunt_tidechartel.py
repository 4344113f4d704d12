import time; T0 = time.perf_counter()
"""Tide-chart inset model: harmonic tide curves computed in tf.numpy_function.

Each element of the dataset is a (station id, start day) pair.  A serial
tf.data map calls tf.numpy_function, which predicts a fortnight of hourly
heights from eight harmonic constituents in plain Python, then extracts the
high and low waters as a chart inset would.  The network classifies the
tidal regime (semidiurnal, mixed, diurnal).
"""
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

HOURS = 336
BATCH = 32
STEPS = 140
EPOCHS = 3
N_STATIONS = 300

# constituent speeds, degrees per hour: M2 S2 N2 K2 K1 O1 P1 Q1
SPEEDS = [28.984, 30.0, 28.440, 30.082, 15.041, 13.943, 14.959, 13.399]


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


_rs = np.random.RandomState(8)
STATION_REGIME = _rs.randint(0, 3, N_STATIONS)
STATION_AMPS = _rs.uniform(0.05, 1.0, (N_STATIONS, 8))
STATION_PHASE = _rs.uniform(0, 360, (N_STATIONS, 8))
for s in range(N_STATIONS):
    r = STATION_REGIME[s]
    if r == 0:
        STATION_AMPS[s, 4:] *= 0.1
    elif r == 2:
        STATION_AMPS[s, :4] *= 0.1


def tide_inset(station, day):
    s = int(station)
    amps = STATION_AMPS[s].tolist()
    phases = STATION_PHASE[s].tolist()
    t0 = float(day) * 24.0
    heights = []
    for h in range(HOURS):
        t = t0 + h
        z = 0.0
        for a, g, w in zip(amps, phases, SPEEDS):
            z += a * math.cos(math.radians(w * t - g))
        heights.append(z)
    highs = lows = 0
    for i in range(1, HOURS - 1):
        if heights[i] > heights[i - 1] and heights[i] >= heights[i + 1]:
            highs += 1
        elif heights[i] < heights[i - 1] and heights[i] <= heights[i + 1]:
            lows += 1
    out = np.empty(HOURS + 2, np.float32)
    out[:HOURS] = heights
    out[HOURS] = highs / 28.0
    out[HOURS + 1] = lows / 28.0
    return out, np.int32(STATION_REGIME[s])


def parse(station, day):
    x, y = tf.numpy_function(tide_inset, [station, day], [tf.float32, tf.int32])
    x.set_shape((HOURS + 2,))
    y.set_shape(())
    return x, y


def make_dataset(seed=4):
    rs = np.random.RandomState(seed)
    stations = rs.randint(0, N_STATIONS, 20000).astype(np.int32)
    days = rs.randint(0, 365, 20000).astype(np.int32)
    ds = tf.data.Dataset.from_tensor_slices((stations, days)).repeat()
    return ds.map(parse).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(9)
    model = keras.Sequential([
        keras.Input((HOURS + 2,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(3),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"tidechartel: numpy_function run {full * 1000:.1f} ms/step, "
      f"{1.0 / full:.1f} steps/s, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    one = next(iter(make_dataset(seed=50)))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"tidechartel: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
