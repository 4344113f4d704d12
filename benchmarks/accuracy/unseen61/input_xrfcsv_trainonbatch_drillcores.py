"""Drill-core lithology classifier trained with model.train_on_batch fed from Python.

Each batch is a block of CSV text exported by a portable XRF core scanner (one row per
core interval, 14 element concentrations in ppm with "<LOD" entries, plus a 1-sigma
counting error per element). The Python loop parses it with the csv module, replaces
below-detection values with half the detection limit, perturbs each value within its
counting error, applies a centred log-ratio transform and one-hots the logged rock code.
That Python parsing is the bottleneck.
"""
import time
T_START = time.perf_counter()
import argparse
import csv
import io
import json
import math
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 128
STEPS = 1100
ELEMENTS = ["Si", "Al", "Fe", "Ca", "K", "Ti", "Mn", "Cu", "Zn", "Pb", "As", "S", "Ni", "Cr"]
LOD = {e: 5.0 + 3 * i for i, e in enumerate(ELEMENTS)}
ROCKS = ["BAS", "AND", "GRN", "SHL", "SST", "LST", "QTZ", "SUL"]
BLOCKS = 64


def make_blocks(rng):
    blocks = []
    for b in range(BLOCKS):
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["hole_id", "from_m", "to_m", "rock"] + ELEMENTS + [e + "_err" for e in ELEMENTS] + ["lith_class"])
        for r in range(BATCH):
            cls = int(rng.integers(0, 5))
            depth = 10 + r * 0.5
            conc = np.exp(rng.normal(5 + cls * 0.3, 1.0, len(ELEMENTS)) + np.arange(len(ELEMENTS)) * 0.1 * cls)
            vals = ["<LOD" if c < LOD[e] else "%.1f" % c for c, e in zip(conc, ELEMENTS)]
            errs = ["%.2f" % (2.0 + 0.05 * c) for c in conc]
            w.writerow(["DDH-%03d" % b, "%.2f" % depth, "%.2f" % (depth + 0.5), ROCKS[(cls + r) % len(ROCKS)]] + vals + errs + [cls])
        blocks.append(buf.getvalue())
    return blocks


def parse_block(text, rng):
    reader = csv.DictReader(io.StringIO(text))
    xs, ys = [], []
    for row in reader:
        vals = []
        for e in ELEMENTS:
            v = row[e]
            c = LOD[e] / 2.0 if v == "<LOD" else float(v)
            err = float(row[e + "_err"])
            rel = min(0.2, err / c)
            c *= 1.0 + rel * float(rng.standard_normal())
            vals.append(math.log(c))
        g = sum(vals) / len(vals)
        clr = [v - g for v in vals]
        onehot = [1.0 if row["rock"] == r else 0.0 for r in ROCKS]
        thick = float(row["to_m"]) - float(row["from_m"])
        xs.append(clr + onehot + [thick])
        ys.append(int(row["lith_class"]))
    return np.array(xs, np.float32), np.array(ys, np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input((len(ELEMENTS) + len(ROCKS) + 1,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(5, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    return m


def train(batch_source):
    model = build_model()
    stamps = []
    for i in range(STEPS):
        x, y = batch_source(i)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    blocks = make_blocks(rng)
    full, loss = train(lambda i: parse_block(blocks[i % BLOCKS], rng))
    emit({"steps_per_second": 1.0 / full})
    msg = "drillcores XRF CSV train_on_batch: %.1f ms/step, %.2f steps/s, loss %.3f" % (full * 1e3, 1.0 / full, loss)
    if args.truth:
        fx, fy = parse_block(blocks[0], np.random.default_rng(SEED + 1))
        comp, _ = train(lambda i: (fx, fy))
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
