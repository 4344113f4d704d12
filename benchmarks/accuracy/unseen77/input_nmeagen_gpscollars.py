"""Wildlife GPS-collar behaviour classifier (u77).

Domain: GPS collars on lions/wildebeest in a conservation area log NMEA
$GPGGA sentences; each track (one collar-day window) is classified as
resting / foraging / travelling / dispersing.
Data path: raw NMEA text blobs -> Python generator (checksum validation,
degree-minute parsing, haversine step length + turning angle in pure Python)
-> tf.data.Dataset.from_generator -> batch -> model.fit.
Deliberate bottleneck: the per-sentence Python parsing in the generator.
"""
import time

_WALL0 = time.perf_counter()

import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
SCRIPT = "input_nmeagen_gpscollars"
BATCH = 64
STEPS = 30
EPOCHS = 2
FIXES = 96
N_TRACKS = 600


def _checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return "%02X" % c


def _dm(val, width):
    a = abs(val)
    d = int(a)
    return ("%0" + str(width) + "d%07.4f") % (d, (a - d) * 60.0)


def make_tracks(rng):
    speeds = np.array([0.05, 0.4, 1.5, 3.0])
    wiggle = np.array([1.5, 1.0, 0.3, 0.1])
    blobs, labels = [], []
    for _ in range(N_TRACKS):
        b = int(rng.integers(0, 4))
        lat0, lon0 = -2.3 + rng.normal(0, 0.3), 34.8 + rng.normal(0, 0.3)
        head = np.cumsum(rng.normal(0, wiggle[b], FIXES))
        step = np.abs(rng.normal(speeds[b], speeds[b] * 0.4, FIXES)) / 111.0
        lat = lat0 + np.cumsum(step * np.cos(head))
        lon = lon0 + np.cumsum(step * np.sin(head))
        sats = rng.integers(4, 12, FIXES)
        hdop = rng.uniform(0.6, 3.0, FIXES)
        alt = 1500 + rng.normal(0, 5, FIXES)
        lines = []
        for k in range(FIXES):
            t = 6 * 3600 + k * 300
            body = "GPGGA,%02d%02d%02d.00,%s,%s,%s,%s,1,%02d,%.1f,%.1f,M,,M,," % (
                t // 3600, (t // 60) % 60, t % 60,
                _dm(lat[k], 2), "S" if lat[k] < 0 else "N",
                _dm(lon[k], 3), "W" if lon[k] < 0 else "E",
                sats[k], hdop[k], alt[k])
            lines.append("$" + body + "*" + _checksum(body))
        blobs.append("\n".join(lines))
        labels.append(b)
    return blobs, np.array(labels, np.int32)


def parse_track(blob):
    import math
    rows = []
    for line in blob.split("\n"):
        if not line.startswith("$GPGGA"):
            continue
        body, cs = line[1:].split("*")
        if _checksum(body) != cs:
            continue
        f = body.split(",")
        lat = int(f[2][:2]) + float(f[2][2:]) / 60.0
        if f[3] == "S":
            lat = -lat
        lon = int(f[4][:3]) + float(f[4][3:]) / 60.0
        if f[5] == "W":
            lon = -lon
        hh, mm, ss = int(f[1][0:2]), int(f[1][2:4]), float(f[1][4:])
        rows.append((hh * 3600 + mm * 60 + ss, lat, lon, int(f[7]), float(f[8]), float(f[9])))
    feats = []
    prev_bearing = 0.0
    for i in range(1, len(rows)):
        t0, la0, lo0 = rows[i - 1][:3]
        t1, la1, lo1, sats, hdop, alt = rows[i]
        p0, p1 = math.radians(la0), math.radians(la1)
        dphi, dlmb = p1 - p0, math.radians(lo1 - lo0)
        a = math.sin(dphi / 2) ** 2 + math.cos(p0) * math.cos(p1) * math.sin(dlmb / 2) ** 2
        dist = 2 * 6371.0 * math.asin(math.sqrt(min(1.0, a)))
        bearing = math.atan2(math.sin(dlmb) * math.cos(p1),
                             math.cos(p0) * math.sin(p1) - math.sin(p0) * math.cos(p1) * math.cos(dlmb))
        turn = (bearing - prev_bearing + math.pi) % (2 * math.pi) - math.pi
        prev_bearing = bearing
        feats.append((dist, dist / max(t1 - t0, 1.0) * 3600.0, math.cos(turn), math.sin(turn),
                      sats / 12.0, hdop / 3.0, (alt - 1500.0) / 5.0))
    arr = np.zeros((FIXES - 1, 7), np.float32)
    arr[: len(feats)] = np.asarray(feats, np.float32)
    return arr


def make_dataset(blobs, labels, seed):
    def gen():
        rng = np.random.default_rng(seed)
        while True:
            i = int(rng.integers(0, len(blobs)))
            yield parse_track(blobs[i]), labels[i]

    sig = (tf.TensorSpec((FIXES - 1, 7), tf.float32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH)


def build_model():
    inp = keras.Input((FIXES - 1, 7))
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(4)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return _sec_per_step(timer.gaps)


def main():
    args = _args()
    blobs, labels = make_tracks(np.random.default_rng(7701))
    full = train(make_dataset(blobs, labels, 1))
    _mark()
    compute = None
    if args.truth:
        batch = next(iter(make_dataset(blobs, labels, 2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    _finish(SCRIPT, full, compute)


if __name__ == "__main__":
    main()
