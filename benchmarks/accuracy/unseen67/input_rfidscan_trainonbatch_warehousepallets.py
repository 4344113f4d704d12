"""Dock-door / direction classification of pallets from raw RFID gate reads (warehousing).

Input path: model.train_on_batch fed from a Python loop; each step the loop
decodes a batch of gate-read event logs: SGTIN-96 EPC hex decoding (header,
filter, partition table, company prefix, item reference, serial), per-antenna
RSSI de-duplication and read-order features.
Known bottleneck: Python-side EPC decoding and read aggregation (input bound).
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import random

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 180
READS = 20
ANTENNAS = 4
NFEAT = ANTENNAS * 4 + 24
NCLASS = 4  # door A in, door A out, door B in, door B out
PARTITION = {0: (40, 4), 1: (37, 7), 2: (34, 10), 3: (30, 14), 4: (27, 17), 5: (24, 20), 6: (20, 24)}


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def encode_sgtin(rng):
    part = rng.randrange(7)
    cbits, ibits = PARTITION[part]
    v = 0x30
    v = (v << 3) | rng.randrange(8)
    v = (v << 3) | part
    v = (v << cbits) | rng.randrange(1 << min(cbits, 30))
    v = (v << ibits) | rng.randrange(1 << min(ibits, 20))
    v = (v << 38) | rng.randrange(1 << 38)
    return "%024X" % v


def make_events(seed=21, n=600):
    rng = random.Random(seed)
    events = []
    for i in range(n):
        cls = i % NCLASS
        base = 1700000000.0 + i * 60
        reads = []
        for r in range(READS):
            ant = (r * ANTENNAS // READS) if cls % 2 == 0 else (ANTENNAS - 1 - r * ANTENNAS // READS)
            if cls >= 2:
                ant = (ant + 2) % ANTENNAS
            rssi = -45 - rng.random() * 25
            reads.append("%.3f;%d;%s;%.1f" % (base + r * 0.05 + rng.random() * 0.02, ant + 1,
                                              encode_sgtin(rng), rssi))
        rng.shuffle(reads)
        events.append((cls, "|".join(reads)))
    return events


def decode_epc(hexstr):
    v = int(hexstr, 16)
    bits = bin(v)[2:].zfill(96)
    header = int(bits[0:8], 2)
    if header != 0x30:
        raise ValueError("not SGTIN-96")
    filt = int(bits[8:11], 2)
    part = int(bits[11:14], 2)
    cbits, ibits = PARTITION[part]
    company = int(bits[14:14 + cbits], 2)
    item = int(bits[14 + cbits:14 + cbits + ibits], 2)
    serial = int(bits[58:96], 2)
    return filt, part, company, item, serial


def event_features(text):
    reads = []
    for rec in text.split("|"):
        ts, ant, epc, rssi = rec.split(";")
        filt, part, company, item, serial = decode_epc(epc)
        reads.append((float(ts), int(ant) - 1, float(rssi), filt, part, company % 97, item % 89))
    reads.sort()
    t0 = reads[0][0]
    best = {}
    for ts, ant, rssi, filt, part, comp, item in reads:
        k = (ant, comp, item)
        if k not in best or rssi > best[k][1]:
            best[k] = (ts, rssi)
    feat = [0.0] * NFEAT
    for ant in range(ANTENNAS):
        rs = [r for r in reads if r[1] == ant]
        if rs:
            feat[ant * 4] = len(rs) / READS
            feat[ant * 4 + 1] = (sum(r[0] for r in rs) / len(rs) - t0)
            feat[ant * 4 + 2] = (max(r[2] for r in rs) + 70) / 30
            feat[ant * 4 + 3] = (min(r[0] for r in rs) - t0)
    for j, r in enumerate(reads[:24]):
        feat[ANTENNAS * 4 + j] = r[1] / ANTENNAS
    return feat


def python_batches(events, seed=0):
    rng = random.Random(seed)
    while True:
        picks = [events[rng.randrange(len(events))] for _ in range(BATCH)]
        x = np.asarray([event_features(t) for _, t in picks], np.float32)
        y = np.asarray([c for c, _ in picks], np.int32)
        yield x, y


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(NCLASS)(x))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    gaps, last, loss = [], None, None
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    gen = python_batches(make_events())
    t = time.perf_counter()
    full, loss = run(lambda: next(gen))
    print("[rfidscan] steps/s=%.2f sec/step=%.4f loss=%.3f train_s=%.1f" % (1 / full, full, loss, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        fixed = next(gen)
        comp, _ = run(lambda: fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[rfidscan] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[rfidscan] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
