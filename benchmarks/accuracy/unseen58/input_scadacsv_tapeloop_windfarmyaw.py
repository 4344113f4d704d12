import time
WALL0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Wind-turbine power-curve residual model trained from raw SCADA CSV exports.

A custom tf.GradientTape loop is fed from Python: for every batch, the loop
reads raw 10-minute SCADA CSV rows (timestamp, turbine id, wind speed,
direction, nacelle yaw, rotor rpm, pitch, ambient temperature, power, status
code) with the csv module, parses ISO timestamps with datetime, drops curtailed
or faulted rows, derives yaw misalignment, air density and rolling 6-row
statistics in Python, and builds windows of the last 24 of 72 parsed rows. The model predicts the
normalised power of the next interval.
Bottleneck: per-batch Python CSV parsing/feature building in the loop.
"""
import csv
import io
import datetime

SEED = 58
BATCH = 64
STEPS = 200
HISTORY = 72  # rows parsed per sample (rolling context), last WINDOW used
WINDOW = 24
FEATS = 10

rng = np.random.default_rng(SEED)


def make_scada(n, r):
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["timestamp", "turbine", "ws", "wdir", "yaw", "rpm", "pitch", "tamb", "power", "status"])
    t0 = datetime.datetime(2025, 1, 1)
    ws = 8.0
    for k in range(n):
        ws = max(0.0, ws + r.normal(0, 0.6))
        wdir = (200 + 40 * np.sin(k / 50) + r.normal(0, 5)) % 360
        yaw = (wdir + r.normal(0, 8)) % 360
        p = min(1.0, max(0.0, ((ws - 3) / 9) ** 3)) * 2050 + r.normal(0, 20)
        w.writerow([(t0 + datetime.timedelta(minutes=10 * k)).isoformat(), "WTG%02d" % (k % 12),
                    f"{ws:.2f}", f"{wdir:.1f}", f"{yaw:.1f}", f"{ws * 1.6:.2f}",
                    f"{max(0, ws - 11) * 2:.2f}", f"{8 + 10 * np.sin(k / 144):.1f}",
                    f"{p:.1f}", "0" if r.random() > 0.03 else str(int(r.integers(1, 9)))])
    return out.getvalue().splitlines()


LINES = make_scada(12000, rng)[1:]


def parse_rows(lines):
    rows = []
    for rec in csv.reader(lines):
        ts = datetime.datetime.fromisoformat(rec[0])
        status = int(rec[9])
        ws, wdir, yaw, rpm, pitch, tamb, power = (float(v) for v in rec[2:9])
        mis = ((wdir - yaw + 180.0) % 360.0) - 180.0
        rho = 101325.0 / (287.05 * (tamb + 273.15))
        tod = (ts.hour * 60 + ts.minute) / 1440.0
        rows.append([ws / 25.0, np.cos(np.radians(mis)), np.sin(np.radians(mis)), rpm / 30.0,
                     pitch / 20.0, rho - 1.2, np.sin(2 * np.pi * tod), np.cos(2 * np.pi * tod),
                     power / 2050.0, 1.0 if status == 0 else 0.0])
    arr = np.array(rows, np.float32)
    # rolling 6-row mean of wind speed replaces raw ws (Python loop)
    roll = np.empty(len(arr), np.float32)
    acc = 0.0
    for i in range(len(arr)):
        acc += arr[i, 0]
        if i >= 6:
            acc -= arr[i - 6, 0]
        roll[i] = acc / min(i + 1, 6)
    arr[:, 0] = roll
    return arr


def make_batch(r):
    xs, ys = [], []
    for _ in range(BATCH):
        s = int(r.integers(0, len(LINES) - HISTORY - 2))
        arr = parse_rows(LINES[s:s + HISTORY + 1])
        xs.append(arr[HISTORY - WINDOW:HISTORY])
        ys.append(arr[HISTORY, 8:9])
    return np.stack(xs), np.stack(ys)


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([
        keras.Input((WINDOW, FEATS)),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.LSTM(64),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


def run(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(train_step(x, y))
        t = time.perf_counter()
        if last is not None:
            gaps.append(t - last)
        last = t
    return sec_per_step(gaps), loss


r = np.random.default_rng(SEED + 1)
print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full, loss = run(lambda: make_batch(r))
emit({"steps_per_second": 1.0 / full})
print(f"input_scadacsv_tapeloop_windfarmyaw: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    fixed = make_batch(np.random.default_rng(SEED + 2))
    compute, _ = run(lambda: fixed)
    emit_truth(full, compute)
