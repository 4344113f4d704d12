"""Haul-truck cycle classification from raw CSV telemetry blobs (open-pit mining).

Input path: tf.data.Dataset.from_tensor_slices over raw CSV strings (one haul
cycle per string); a tf.data map calls tf.numpy_function that parses the CSV in
Python, runs a load/haul/dump/return state machine and computes cycle features;
feeds model.fit.
Known bottleneck: Python CSV parsing + segmentation inside tf.numpy_function.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import math
import os
import random

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 70
EPOCHS = 3
ROWS = 24
NFEAT = 40
NCLASS = 3  # normal, overloaded, ramp-slow


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_blobs(seed=5, n=500):
    rng = random.Random(seed)
    blobs, labels = [], []
    for i in range(n):
        cls = i % NCLASS
        payload_full = 220 + (40 if cls == 1 else 0) + rng.random() * 20
        lines = ["ts,truck,lat,lon,speed_kmh,payload_t,fuel_lph,grade_pct"]
        lat, lon = -23.36 + rng.random() * 0.01, 119.73 + rng.random() * 0.01
        for r in range(ROWS):
            phase = r * 4 // ROWS  # 0 load, 1 haul, 2 dump, 3 return
            payload = payload_full if phase in (1, 2) and r % (ROWS // 4) < ROWS // 8 or phase == 1 else 0.0
            speed = [2, 28, 3, 40][phase] * (0.6 if cls == 2 and phase == 1 else 1.0) + rng.gauss(0, 2)
            grade = [0, 8, 0, -8][phase] + rng.gauss(0, 1)
            fuel = 80 + speed * 3 + payload * 0.4 + grade * 5 + rng.gauss(0, 4)
            lat += speed * 1e-6
            lon += speed * 7e-7
            lines.append("2026-03-01T%02d:%02d:%02d,HT%03d,%.6f,%.6f,%.2f,%.1f,%.1f,%.2f" % (
                6 + r // 3600, (r // 60) % 60, r % 60, i % 40, lat, lon, max(speed, 0.0),
                payload, fuel, grade))
        blobs.append("\n".join(lines))
        labels.append(cls)
    return blobs, np.asarray(labels, np.int32)


def parse_cycle(blob):
    text = blob.decode() if isinstance(blob, bytes) else blob
    rows = text.split("\n")[1:]
    state, seg_time, prev = "load", {"load": 0, "haul": 0, "dump": 0, "return": 0}, None
    speeds, fuels, grades, payloads, dist = [], [], [], [], 0.0
    for line in rows:
        ts, truck, lat, lon, spd, pay, fuel, grade = line.split(",")
        hh, mm, ss = ts[11:].split(":")
        t = int(hh) * 3600 + int(mm) * 60 + int(ss)
        lat, lon, spd, pay, fuel, grade = float(lat), float(lon), float(spd), float(pay), float(fuel), float(grade)
        if prev is not None:
            dlat = math.radians(lat - prev[1])
            dlon = math.radians(lon - prev[2])
            a = math.sin(dlat / 2) ** 2 + math.cos(math.radians(lat)) * math.cos(math.radians(prev[1])) * math.sin(dlon / 2) ** 2
            dist += 6371000 * 2 * math.atan2(math.sqrt(a), math.sqrt(1 - a))
            seg_time[state] += t - prev[0]
        if state == "load" and pay > 50 and spd > 10:
            state = "haul"
        elif state == "haul" and spd < 6:
            state = "dump"
        elif state == "dump" and pay < 10 and spd > 10:
            state = "return"
        prev = (t, lat, lon)
        speeds.append(spd); fuels.append(fuel); grades.append(grade); payloads.append(pay)
    feat = []
    for series in (speeds, fuels, grades, payloads):
        n = len(series)
        mu = sum(series) / n
        sd = math.sqrt(sum((v - mu) ** 2 for v in series) / n)
        srt = sorted(series)
        feat += [mu, sd, srt[n // 10], srt[n // 2], srt[9 * n // 10], max(series)]
    feat += [seg_time[k] / 100.0 for k in ("load", "haul", "dump", "return")]
    feat += [dist / 1000.0]
    feat += [0.0] * (NFEAT - len(feat))
    arr = np.asarray(feat[:NFEAT], np.float32)
    return arr / (np.abs(arr).max() + 1e-6)


def map_fn(blob, label):
    x = tf.numpy_function(parse_cycle, [blob], tf.float32)
    x.set_shape((NFEAT,))
    return x, label


def make_ds(blobs, labels):
    ds = tf.data.Dataset.from_tensor_slices((blobs, labels)).shuffle(len(blobs), seed=1).repeat()
    return ds.map(map_fn).batch(BATCH)


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NCLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    blobs, labels = make_blobs()
    ds = make_ds(blobs, labels)
    t = time.perf_counter()
    full = run(ds)
    print("[haulcycle] steps/s=%.2f sec/step=%.4f train_s=%.1f" % (1 / full, full, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        comp = run(fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[haulcycle] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[haulcycle] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
