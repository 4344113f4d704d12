"""Slope-grooming GPS tracks: snowcat NMEA sentences are parsed in Python
(ddmm.mmmm -> degrees, haversine segment lengths, headings, speeds) and
resampled into fixed profiles, fed batch by batch to model.train_on_batch."""
import time; T0 = time.perf_counter()
import os
import sys
import json
import math
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


FIXES = 90
BINS = 32
CH = 4
BATCH = 96
STEPS = 90
EPOCHS = 3


def nmea_track(rng):
    lat0, lon0 = 47.0 + rng.uniform(0, 0.05), 11.0 + rng.uniform(0, 0.05)
    heading = rng.uniform(0, 2 * math.pi)
    speed = rng.uniform(2.0, 4.5)
    lines = []
    lat, lon, alt = lat0, lon0, rng.uniform(1500, 2500)
    turns = rng.normal(0, 0.15, FIXES).tolist()
    for i in range(FIXES):
        heading += turns[i]
        lat += speed * math.cos(heading) / 111320.0
        lon += speed * math.sin(heading) / (111320.0 * math.cos(math.radians(lat)))
        alt -= speed * 0.2 * math.cos(heading)
        la, lo = abs(lat), abs(lon)
        body = "GPGGA,%02d%02d%02d.00,%02d%07.4f,N,%03d%07.4f,E,1,09,0.9,%.1f,M,47.0,M,," % (
            6, i // 60, i % 60, int(la), (la - int(la)) * 60, int(lo), (lo - int(lo)) * 60, alt)
        ck = 0
        for c in body:
            ck ^= ord(c)
        lines.append("$%s*%02X" % (body, ck))
    return lines


def parse_track(lines):
    pts = []
    for line in lines:
        body, ck = line[1:].split("*")
        c = 0
        for ch in body:
            c ^= ord(ch)
        if c != int(ck, 16):
            continue
        f = body.split(",")
        lat = int(f[2][:2]) + float(f[2][2:]) / 60.0
        lon = int(f[4][:3]) + float(f[4][3:]) / 60.0
        pts.append((math.radians(lat), math.radians(lon), float(f[9])))
    seg, head, climb = [], [], []
    for (a1, o1, h1), (a2, o2, h2) in zip(pts[:-1], pts[1:]):
        d = 2 * 6371000.0 * math.asin(math.sqrt(math.sin((a2 - a1) / 2) ** 2
                                                + math.cos(a1) * math.cos(a2) * math.sin((o2 - o1) / 2) ** 2))
        seg.append(d)
        head.append(math.atan2(math.sin(o2 - o1) * math.cos(a2),
                               math.cos(a1) * math.sin(a2) - math.sin(a1) * math.cos(a2) * math.cos(o2 - o1)))
        climb.append(h2 - h1)
    prof = np.zeros((BINS, CH), np.float32)
    per = len(seg) / BINS
    for b in range(BINS):
        lo_i, hi_i = int(b * per), max(int((b + 1) * per), int(b * per) + 1)
        s = seg[lo_i:hi_i]
        h = head[lo_i:hi_i]
        prof[b] = (sum(s) / len(s) / 5.0, math.sin(sum(h) / len(h)), math.cos(sum(h) / len(h)),
                   sum(climb[lo_i:hi_i]) / 5.0)
    turniness = sum(abs(head[i + 1] - head[i]) for i in range(len(head) - 1)) / len(head)
    return prof, (0 if turniness < 0.12 else (1 if turniness < 0.16 else 2))


def track_batch(rng):
    x = np.zeros((BATCH, BINS, CH), np.float32)
    y = np.zeros((BATCH,), np.int32)
    for b in range(BATCH):
        x[b], y[b] = parse_track(nmea_track(rng))
    return x, y


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((BINS, CH))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inp, out, name="grooming_pattern")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def train(next_batch):
    model = build_model()
    gaps = []
    t = time.perf_counter()
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = next_batch()
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), time.perf_counter() - t, loss


def main():
    rng = np.random.default_rng(89)
    full, loop_s, loss = train(lambda: track_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    print("snowcattracks normal: %.4f s/step, loop %.1f s, loss %.3f, wall %.1f s" % (full, loop_s, loss, time.perf_counter() - T0))
    if TRUTH:
        xb, yb = track_batch(np.random.default_rng(7))
        comp, _, _ = train(lambda: (xb, yb))
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("snowcattracks truth: compute %.4f s/step, full %.4f s/step, input fraction %.3f" % (comp, full, frac))


if __name__ == "__main__":
    main()
