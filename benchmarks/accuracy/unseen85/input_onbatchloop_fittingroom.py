"""Fitting-room booking conversion model.

Boutique fitting-room booking records arrive as raw pipe-separated log
lines. Every batch is parsed in Python (timestamps, size lists, item codes,
staff notes) and pushed through model.train_on_batch in a plain loop.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import zlib
import datetime

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


SEED = 8502
BATCH = 192
STEPS = 900
N_BOOKINGS = 12000
HASH_BUCKETS = 48
SIZES = ["XXS", "XS", "S", "M", "L", "XL", "XXL", "6", "8", "10", "12", "14", "16", "18"]
STORES = [f"S{i:02d}" for i in range(1, 25)]
NOTES = ["bridal party", "tailoring pin-up", "personal shopper", "walk-in", "click and try",
         "school uniform", "suit fitting", "maternity", "returns exchange", "VIP preview"]
N_FEAT = 24 + len(SIZES) + 2 * HASH_BUCKETS + len(NOTES) + 9

rng = np.random.default_rng(SEED)
keras.utils.set_random_seed(SEED)


def make_log():
    base = datetime.datetime(2026, 1, 5, 9, 0)
    lines, labels = [], []
    for i in range(N_BOOKINGS):
        ts = base + datetime.timedelta(minutes=int(rng.integers(0, 60 * 24 * 300)))
        n_items = int(rng.integers(1, 9))
        sizes = ",".join(rng.choice(SIZES, size=n_items))
        items = ",".join(f"SKU{int(rng.integers(10000, 99999))}" for _ in range(n_items))
        dur = int(rng.integers(4, 45))
        staff = int(rng.integers(0, 3))
        party = int(rng.integers(1, 5))
        note = NOTES[int(rng.integers(0, len(NOTES)))]
        booked = ts - datetime.timedelta(hours=int(rng.integers(1, 24 * 21)))
        line = (f"{ts.strftime('%Y-%m-%dT%H:%M')}|booked={booked.strftime('%Y-%m-%dT%H:%M')}|store={STORES[int(rng.integers(0, len(STORES)))]}"
                f"|room={int(rng.integers(1, 9))}|items={items}|sizes={sizes}|dur={dur}"
                f"|staff={staff}|party={party}|note={note}")
        score = 0.08 * dur + 0.6 * staff - 0.3 * party + 0.25 * n_items + (1.0 if "bridal" in note or "suit" in note else 0.0)
        labels.append(1.0 if score + rng.normal(0, 0.8) > 3.0 else 0.0)
        lines.append(line)
    return lines, np.asarray(labels, dtype=np.float32)


LINES, LABELS = make_log()


def parse_line(line):
    fields = line.split("|")
    ts = datetime.datetime.strptime(fields[0], "%Y-%m-%dT%H:%M")
    kv = dict(f.split("=", 1) for f in fields[1:])
    v = np.zeros(N_FEAT, dtype=np.float32)
    v[ts.hour] = 1.0  # hour of day
    v[ts.weekday() % 24] += 0.5
    o = 24
    for s in kv["sizes"].split(","):
        v[o + SIZES.index(s)] += 1.0
    o += len(SIZES)
    for sku in kv["items"].split(","):
        v[o + zlib.crc32(sku.encode()) % HASH_BUCKETS] += 1.0
    o += HASH_BUCKETS
    for sku, size in zip(kv["items"].split(","), kv["sizes"].split(",")):
        v[o + zlib.crc32(f"{sku}:{size}".encode()) % HASH_BUCKETS] += 1.0  # sku x size cross
    o += HASH_BUCKETS
    v[o + NOTES.index(kv["note"])] = 1.0
    o += len(NOTES)
    v[o + 0] = int(kv["dur"]) / 45.0
    v[o + 1] = int(kv["staff"]) / 2.0
    v[o + 2] = int(kv["party"]) / 4.0
    v[o + 3] = len(kv["items"].split(",")) / 8.0
    v[o + 4] = int(kv["room"]) / 8.0
    v[o + 5] = STORES.index(kv["store"]) / len(STORES)
    v[o + 6] = ts.month / 12.0
    v[o + 7] = 1.0 if ts.weekday() >= 5 else 0.0
    booked = datetime.datetime.strptime(kv["booked"], "%Y-%m-%dT%H:%M")
    v[o + 8] = (ts - booked).total_seconds() / (3600.0 * 24 * 21)  # booking lead time
    return v


def build_batch(pick_rng):
    idx = pick_rng.integers(0, N_BOOKINGS, size=BATCH)
    xb = np.stack([parse_line(LINES[i]) for i in idx])
    return xb, LABELS[idx]


def build_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(feed):
    model = build_model()
    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        xb, yb = feed(step)
        loss = float(model.train_on_batch(xb, yb))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps[:-1], stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss


def main():
    pick = np.random.default_rng(SEED + 1)
    spf, loss = train(lambda step: build_batch(pick))
    emit({"steps_per_second": 1.0 / spf})
    line = f"fittingroom: {STEPS} steps, {spf*1000:.1f} ms/step, loss {loss:.3f}"
    if TRUTH:
        fixed = build_batch(np.random.default_rng(SEED + 2))
        spc, _ = train(lambda step: fixed)
        frac = min(max((spf - spc) / spf, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f", compute-only {spc*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", total {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
