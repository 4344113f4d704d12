"""Auction lot catalogue lines -> hammer price per kg.

Broker catalogue lines (garden, grade, invoice, packages, valuation range,
taster remarks) are parsed with regular expressions in Python, turned into
hashed bag-of-words + one-hot grade + numeric columns, and pushed one batch
at a time through model.train_on_batch.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import re
import zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 128
STEPS = 350
EPOCHS = 3
REMARK_WORDS = 80
HASH = 512

GARDENS = ["Kenmare", "Glenloch", "Ambewela", "Nuwara", "Makaibari", "Halmari", "Kericho",
           "Nandi Hills", "Uva Highlands", "Dimbula", "Rungli", "Castleton", "Kangaita"]
GRADES = ["BP1", "PF1", "PD", "D1", "BOP", "BOPF", "FBOP", "OP", "OP1", "FTGFOP1"]
REMARKS = ["bright", "brisk", "coppery", "even", "black", "grainy", "well", "made", "stalky",
           "fibrous", "tippy", "mixed", "attractive", "flaky", "dusty", "choppy", "golden",
           "plain", "thin", "coloury", "strong", "point", "useful", "liquor", "quality"]

LINE_RE = re.compile(r"LOT (\d+) \| Garden: ([A-Za-z ]+) \| Grade: (\w+) \| Invoice (\d+) \| "
                     r"(\d+) pkgs x ([\d.]+) kg \| Valuation (\d+)-(\d+) \| Sale (\d+) \| Remarks: (.*)")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def catalogue_lines(rng, n):
    out = []
    for _ in range(n):
        g = rng.integers(len(GRADES))
        lo = int(rng.integers(180, 420))
        words = " ".join(REMARKS[k] for k in rng.integers(0, len(REMARKS), REMARK_WORDS))
        out.append("LOT %d | Garden: %s | Grade: %s | Invoice %d | %d pkgs x %.1f kg | Valuation %d-%d | "
                   "Sale %d | Remarks: %s" % (rng.integers(1000, 9999), GARDENS[rng.integers(len(GARDENS))],
                                              GRADES[g], rng.integers(100, 5000), rng.integers(10, 60),
                                              rng.choice([50.0, 52.5, 55.0, 60.0]), lo, lo + 30,
                                              rng.integers(1, 52), words))
    return out


def parse_lot(line):
    m = LINE_RE.match(line)
    lot, garden, grade, invoice, pkgs, kg, v_lo, v_hi, sale, remarks = m.groups()
    vec = np.zeros(HASH + len(GRADES) + 6, np.float32)
    for w in remarks.lower().split():
        vec[zlib.crc32(w.encode()) % HASH] += 1.0
    vec[zlib.crc32(garden.strip().encode()) % HASH] += 2.0
    vec[HASH + GRADES.index(grade)] = 1.0
    lo, hi = float(v_lo), float(v_hi)
    vec[-6:] = [int(pkgs) / 60.0, float(kg) / 60.0, lo / 400.0, hi / 400.0, int(sale) / 52.0,
                int(invoice) / 5000.0]
    good = sum(remarks.count(w) for w in ("bright", "brisk", "coppery", "golden", "tippy"))
    price = (lo + hi) / 2.0 + 6.0 * good - 4.0 * remarks.count("stalky")
    return vec, price / 400.0


def make_batch(rng):
    rows = [parse_lot(ln) for ln in catalogue_lines(rng, BATCH)]
    x = np.stack([r[0] for r in rows])
    y = np.array([r[1] for r in rows], np.float32)[:, None]
    return x, y


FEATS = HASH + len(GRADES) + 6


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(next_batch):
    model = build_model()
    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = next_batch()
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), loss


rng = np.random.default_rng(51)
full, loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print("[lotcatalogue] normal run: %.4f s/step, %.2f steps/s, loss %.4f, wall %.1f s"
      % (full, 1.0 / full, loss, time.perf_counter() - T0))

if TRUTH:
    fixed = make_batch(np.random.default_rng(51))
    compute, _ = train(lambda: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[lotcatalogue] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
