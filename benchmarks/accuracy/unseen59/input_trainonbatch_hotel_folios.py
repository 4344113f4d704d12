"""Hospitality: predict next-stay spend tier from hotel guest folios.

Data path: model.train_on_batch in a Python loop. Each batch is built in
Python: a folio text export is rendered per guest (one posting per line:
"2025-03-04 21:13 | ROOMSVC | Club sandwich x2 | 34.50 EUR | rm 412"),
parsed with a regular expression, amounts converted between currencies,
and postings bucketed into a 14-night x 12-department spend matrix.
Bottleneck: regex parsing + bucketing on the Python side (input).
"""
import time
WALL0 = time.perf_counter()
import datetime, json, os, re, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, NIGHTS = 32, 120, 14
DEPTS = ["ROOM", "ROOMSVC", "BAR", "REST", "SPA", "MINIBAR", "LAUNDRY", "PARKING", "TELEPHONE", "GOLF", "TAX", "MISC"]
FX = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.04}
LINE = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}) \| ([A-Z]+) \| (.+?) x(\d+) \| ([\d.]+) ([A-Z]{3}) \| rm (\d+)$")


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def folio(rng):
    start = datetime.datetime(2025, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 300)))
    nights = int(rng.integers(1, NIGHTS + 1)); cur = list(FX)[rng.integers(0, 4)]; room = int(rng.integers(100, 999))
    lines = []
    for _ in range(int(rng.integers(20, 60))):
        t = start + datetime.timedelta(minutes=int(rng.integers(0, nights * 1440)))
        d = DEPTS[rng.integers(0, len(DEPTS))]
        lines.append("%s | %s | item %d x%d | %.2f %s | rm %d" % (t.strftime("%Y-%m-%d %H:%M"), d, rng.integers(0, 500),
                                                             rng.integers(1, 4), rng.uniform(2, 300), cur, room))
    return start, "\n".join(lines)


def parse(start, text):
    m = np.zeros((NIGHTS, len(DEPTS)), np.float32)
    for line in text.split("\n"):
        g = LINE.match(line)
        if g is None:
            continue
        t = datetime.datetime(int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]))
        night = min((t - start).days, NIGHTS - 1)
        amount = float(g[9]) * FX[g[10]] * int(g[8])
        m[night, DEPTS.index(g[6])] += amount / 100.0
    return m


def batches(seed=59):
    rng = np.random.default_rng(seed)
    while True:
        xs = np.zeros((BATCH, NIGHTS, len(DEPTS)), np.float32); ys = np.zeros((BATCH,), np.int32)
        for b in range(BATCH):
            start, text = folio(rng)
            xs[b] = parse(start, text)
            ys[b] = min(int(xs[b].sum() / 40), 3)
        yield xs, ys


def build():
    keras.utils.set_random_seed(59)
    m = keras.Sequential([keras.Input((NIGHTS, len(DEPTS))), keras.layers.Conv1D(128, 3, activation="relu", padding="same"),
                          keras.layers.Conv1D(256, 3, activation="relu", padding="same"), keras.layers.Flatten(),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(4)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(next_batch):
    model = build()
    stamps = []
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    it = batches()
    full, loss = train(lambda: next(it))
    emit({"steps_per_second": 1.0 / full})
    print("input_trainonbatch_hotel_folios: %.4f s/step (%.1f steps/s), loss %.3f, wall %.1f s" % (full, 1 / full, loss, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        x, y = next(batches())
        comp, _ = train(lambda: (x, y))
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
