"""Vessel-type classification from raw shipboard GPS logger output.

Each voyage log is a text file of NMEA 0183 sentences ($GPRMC fixes mixed
with $GPGGA/$GPGSV chatter). A Python reader validates every sentence's XOR
checksum, converts ddmm.mmmm coordinates, knots and course into local metric
tracks, cuts 128-fix windows and batches them by hand for a custom
@tf.function GradientTape training loop (fishing / cargo / tanker / ferry).
"""
import json
import math
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

SEED = 42
N_VOYAGES = 24
FIXES = 2600
WIN = 128
BATCH = 32
STEPS = 300
CLASSES = 4
FEAT = 7


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return "%02X" % c


def to_ddmm(value, pos, neg):
    hemi = pos if value >= 0 else neg
    value = abs(value)
    deg = int(value)
    return "%d%07.4f" % (deg, (value - deg) * 60), hemi


def write_voyages(folder, rng):
    paths, labels = [], []
    for v in range(N_VOYAGES):
        kind = v % CLASSES
        speed = [4.0, 13.0, 11.0, 18.0][kind]
        turn = [0.08, 0.005, 0.004, 0.02][kind]
        lat, lon = 57.0 + rng.uniform(-2, 2), 10.0 + rng.uniform(-3, 3)
        course = rng.uniform(0, 360)
        lines = []
        for k in range(FIXES):
            course = (course + math.degrees(turn * rng.standard_normal())) % 360
            sog = max(0.0, speed + rng.normal(0, 0.15 * speed))
            dist = sog * 0.5144 * 10.0  # metres per 10 s fix
            lat += dist * math.cos(math.radians(course)) / 111320.0
            lon += dist * math.sin(math.radians(course)) / (111320.0 * math.cos(math.radians(lat)))
            hh, mm, ss = (k * 10 // 3600) % 24, (k * 10 // 60) % 60, (k * 10) % 60
            la, ns = to_ddmm(lat, "N", "S")
            lo, ew = to_ddmm(lon, "E", "W")
            body = "GPRMC,%02d%02d%02d.00,A,%s,%s,%s,%s,%.1f,%.1f,040526,,,A" % (
                hh, mm, ss, la, ns, "0" + lo if lon < 100 else lo, ew, sog, course)
            lines.append("$%s*%s" % (body, checksum(body)))
            gga = "GPGGA,%02d%02d%02d.00,%s,%s,%s,%s,1,09,0.9,12.0,M,41.0,M,," % (
                hh, mm, ss, la, ns, lo, ew)
            lines.append("$%s*%s" % (gga, checksum(gga)))
            if k % 5 == 0:
                gsv = "GPGSV,3,1,11,03,03,111,00,04,15,270,00,06,01,010,00,13,06,292,00"
                lines.append("$%s*%s" % (gsv, checksum(gsv)))
        path = os.path.join(folder, "voyage_%03d.nmea" % v)
        with open(path, "w") as fh:
            fh.write("\r\n".join(lines) + "\r\n")
        paths.append(path)
        labels.append(kind)
    return paths, labels


def parse_rmc(line):
    line = line.strip()
    if not line.startswith("$") or "*" not in line:
        return None
    body, cs = line[1:].split("*", 1)
    if checksum(body) != cs.upper():
        return None
    f = body.split(",")
    if f[0] != "GPRMC" or f[2] != "A":
        return None
    lat = int(f[3][:2]) + float(f[3][2:]) / 60.0
    lon = int(f[5][:3]) + float(f[5][3:]) / 60.0
    if f[4] == "S":
        lat = -lat
    if f[6] == "W":
        lon = -lon
    t = int(f[1][0:2]) * 3600 + int(f[1][2:4]) * 60 + float(f[1][4:])
    return t, lat, lon, float(f[7]), float(f[8])


def track_windows(paths, labels, rng):
    while True:
        for j in rng.permutation(len(paths)):
            fixes = []
            with open(paths[j]) as fh:
                for line in fh:
                    r = parse_rmc(line)
                    if r is not None:
                        fixes.append(r)
            for s in range(0, len(fixes) - WIN, WIN // 2):
                w = fixes[s:s + WIN]
                lat0, lon0 = w[0][1], w[0][2]
                feat = np.zeros((WIN, FEAT), dtype=np.float32)
                prev_c = w[0][4]
                for i, (t, lat, lon, sog, cog) in enumerate(w):
                    north = (lat - lat0) * 111320.0
                    east = (lon - lon0) * 111320.0 * math.cos(math.radians(lat0))
                    dc = (cog - prev_c + 180) % 360 - 180
                    prev_c = cog
                    feat[i] = (north / 5000, east / 5000, sog / 20,
                               math.sin(math.radians(cog)), math.cos(math.radians(cog)),
                               dc / 10, (t - w[0][0]) / 1280)
                yield feat, labels[j]


def batches(paths, labels, rng):
    xs, ys = [], []
    for x, y in track_windows(paths, labels, rng):
        xs.append(x)
        ys.append(y)
        if len(xs) == BATCH:
            yield np.stack(xs), np.asarray(ys, dtype=np.int32)
            xs, ys = [], []


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((WIN, FEAT))
    x = keras.layers.Conv1D(48, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inp, out)


def train(source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next(source)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


def repeat_batch(x, y):
    while True:
        yield x, y


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u42_input_nmea_tapeloop_vessels_")
    try:
        paths, labels = write_voyages(tmp, rng)
        full, loss = train(batches(paths, labels, np.random.default_rng(SEED)))
        emit({"steps_per_second": 1.0 / full})
        msg = "vessels: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
        if truth:
            x, y = next(batches(paths, labels, np.random.default_rng(SEED)))
            compute, _ = train(repeat_batch(x, y))
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
