"""Craft-fair sales baskets -> "will add a glaze-test mug" propensity model.

Point-of-sale exports from weekend craft fairs are lists of Python dicts
(one per basket: stall, items, prices, payment).  A Python loop turns each
batch of raw baskets into multi-hot item vectors, price histograms and
stall co-occurrence counts, then calls model.train_on_batch.
"""
import time; T0 = time.perf_counter()
import json
import os
import sys
from collections import Counter

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_ITEMS = 3000
N_STALLS = 120
PRICE_BINS = 24
PAIR_BUCKETS = 512
BATCH = 256
STEPS = 350
FEAT = N_ITEMS + N_STALLS + PRICE_BINS + PAIR_BUCKETS + 4
PAIR_OFF = N_ITEMS + N_STALLS + PRICE_BINS


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


rng = np.random.default_rng(91)
ITEM_STALL = rng.integers(0, N_STALLS, N_ITEMS)
ITEM_PRICE = np.round(rng.lognormal(3.0, 0.7, N_ITEMS), 2)
ITEM_NAMES = [f"{['mug','bowl','vase','plate','bead','ornament','tumbler','platter'][i % 8]}-{i:04d}" for i in range(N_ITEMS)]
NAME_TO_ID = {n: i for i, n in enumerate(ITEM_NAMES)}
POPULAR = rng.zipf(1.3, 200000) % N_ITEMS


def raw_baskets(r, n):
    out = []
    for _ in range(n):
        k = int(r.integers(2, 24))
        items = [ITEM_NAMES[int(POPULAR[int(r.integers(0, len(POPULAR)))])] for _ in range(k)]
        out.append({"fair": f"fair-{int(r.integers(0, 30))}", "items": items,
                    "qty": [int(r.integers(1, 4)) for _ in items],
                    "payment": ["cash", "card", "tap"][int(r.integers(0, 3))],
                    "hour": int(r.integers(9, 18))})
    return out


def featurize(baskets):
    x = np.zeros((len(baskets), FEAT), np.float32)
    y = np.zeros((len(baskets), 1), np.float32)
    for b, basket in enumerate(baskets):
        ids = [NAME_TO_ID[name] for name in basket["items"]]
        counts = Counter()
        total = 0.0
        for i, q in zip(ids, basket["qty"]):
            counts[i] += q
            total += ITEM_PRICE[i] * q
        for i, q in counts.items():
            x[b, i] = np.log1p(q)
        stalls = Counter(int(ITEM_STALL[i]) for i in ids)
        for s, c in stalls.items():
            x[b, N_ITEMS + s] = c / len(ids)
        for i in ids:
            pb = min(PRICE_BINS - 1, int(np.log1p(ITEM_PRICE[i]) * 4))
            x[b, N_ITEMS + N_STALLS + pb] += 1.0
        # bought-together pairs, hashed (e.g. mug + matching saucer from the same stall)
        for a in range(len(ids)):
            for c in range(a + 1, len(ids)):
                lo_id, hi_id = min(ids[a], ids[c]), max(ids[a], ids[c])
                x[b, PAIR_OFF + hash((lo_id, hi_id)) % PAIR_BUCKETS] += 1.0
        x[b, -4] = np.log1p(total) / 6
        x[b, -3] = basket["hour"] / 18
        x[b, -2] = basket["payment"] == "card"
        x[b, -1] = len(ids) / 24
        y[b, 0] = float(any(n.startswith("mug") for n in basket["items"]) and total > 60)
    return x, y


def make_model():
    return keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])


def train(batches):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(5e-4), loss="binary_crossentropy", metrics=["auc"])
    stamps = []
    for step in range(STEPS):
        x, y = batches(step)
        loss = float(model.train_on_batch(x, y)[0])
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


data_rng = np.random.default_rng(7)
full, last_loss = train(lambda step: featurize(raw_baskets(data_rng, BATCH)))
emit({"steps_per_second": 1.0 / full})
print(f"fairbaskets: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, loss {last_loss:.3f}, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fx, fy = featurize(raw_baskets(np.random.default_rng(5), BATCH))
    compute, _ = train(lambda step: (fx, fy))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"fairbaskets: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
