"""Withering-trough sensor logs -> leaf moisture at end of wither.

Each sample is one trough's 24 h logger dump (raw CSV lines: trough id,
minute, air temp, RH, fan airflow, leaf bed weight).  A Python generator
renders the lines, parses them back, derives per-reading features and
yields one (sequence, target) pair; tf.data.Dataset.from_generator batches
them for model.fit.
"""
import time; T0 = time.perf_counter()
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
STEPS = 120
EPOCHS = 3
READINGS = 96          # one reading every 15 min over 24 h
CHANNELS = 6


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
        g = self.gaps[5:]
        return sum(g) / len(g)


def logger_dump(rnd, trough):
    base_t = rnd.uniform(24.0, 31.0)
    base_rh = rnd.uniform(62.0, 88.0)
    fan = rnd.uniform(0.6, 1.9)
    bed = rnd.uniform(180.0, 260.0)
    lines = []
    for k in range(READINGS):
        t = base_t + 2.5 * math.sin(k / 15.0) + rnd.gauss(0.0, 0.35)
        rh = base_rh - 0.12 * k * fan + rnd.gauss(0.0, 1.1)
        flow = fan * (1.0 + 0.05 * rnd.gauss(0.0, 1.0))
        bed = bed - 0.0009 * bed * fan * (t - 18.0) / 10.0 + rnd.gauss(0.0, 0.2)
        lines.append("T%02d,%d,%.2f,%.1f,%.3f,%.2f" % (trough, k * 15, t, rh, flow, bed))
    return lines


def trough_samples(seed):
    rnd = random.Random(seed)
    while True:
        trough = rnd.randint(1, 40)
        lines = logger_dump(rnd, trough)
        temps, rhs, flows, beds = [], [], [], []
        for ln in lines:
            parts = ln.strip().split(",")
            if not parts[0].startswith("T"):
                continue
            temps.append(float(parts[2]))
            rhs.append(float(parts[3]))
            flows.append(float(parts[4]))
            beds.append(float(parts[5]))
        b0 = beds[0]
        seq = []
        for k in range(READINGS):
            lo = max(0, k - 3)
            roll_t = sum(temps[lo:k + 1]) / (k + 1 - lo)
            d_bed = (beds[k] - beds[k - 1]) if k else 0.0
            seq.append([(temps[k] - 27.0) / 3.0, (rhs[k] - 70.0) / 15.0,
                        flows[k] - 1.2, beds[k] / b0 - 0.85, d_bed,
                        (roll_t - 27.0) / 3.0])
        moisture = 78.0 * beds[-1] / b0
        yield np.asarray(seq, dtype=np.float32), np.float32((moisture - 60.0) / 10.0)


def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        lambda: trough_samples(seed),
        output_signature=(tf.TensorSpec((READINGS, CHANNELS), tf.float32),
                          tf.TensorSpec((), tf.float32)))
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(95)
    inp = keras.Input((READINGS, CHANNELS))
    x = keras.layers.Conv1D(80, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(80, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(80, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(make_dataset(7))
emit({"steps_per_second": 1.0 / full})
print("[witheringtrough] normal run: %.4f s/step, %.2f steps/s, wall %.1f s"
      % (full, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    one = next(iter(make_dataset(7)))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[witheringtrough] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
