"""Purchase prediction from e-commerce session logs stored as many small JSON-lines files.

Setup writes one small file per user session (a few dozen click/cart/purchase events). The
training loop is a plain Python loop that opens 64 files per step, parses every event with
json.loads, builds item-history, action-count, dwell and time-of-day features, and calls
model.train_on_batch. Item embedding + MLP.
"""

import argparse
import json
import math
import os
import random
import tempfile
import time
from datetime import datetime, timezone

import keras
import numpy as np

N_SESSIONS = 2500
N_ITEMS = 20000
HIST = 30
BATCH = 64
STEPS = 130
SKIP = 5
ACTIONS = ["view", "view", "view", "click", "click", "add_to_cart", "wishlist", "purchase"]


def write_sessions(root, rng):
    paths = []
    for s in range(N_SESSIONS):
        user = rng.randrange(100_000)
        ts = 1_700_000_000 + rng.randrange(30 * 86400)
        lines = []
        for _ in range(rng.randrange(15, 60)):
            ts += rng.randrange(2, 400)
            ev = {
                "user": user,
                "ts": ts,
                "item": rng.randrange(N_ITEMS),
                "action": rng.choice(ACTIONS),
                "dwell_ms": int(rng.expovariate(1 / 8000)),
                "device": rng.choice(["ios", "android", "web"]),
                "price": round(rng.uniform(1, 300), 2),
            }
            lines.append(json.dumps(ev))
        path = os.path.join(root, f"session_{s:06d}.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines))
        paths.append(path)
    return paths


def session_features(path):
    with open(path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    label = 0.0
    if events and events[-1]["action"] == "purchase":
        label = 1.0
    events = events[:-1]
    items = [e["item"] + 1 for e in events][-HIST:]
    items = [0] * (HIST - len(items)) + items
    counts = {a: 0 for a in set(ACTIONS)}
    hours = [0.0] * 24
    dwell = []
    prices = []
    devices = {"ios": 0, "android": 0, "web": 0}
    for e in events:
        counts[e["action"]] += 1
        hours[datetime.fromtimestamp(e["ts"], tz=timezone.utc).hour] += 1
        dwell.append(math.log1p(e["dwell_ms"]))
        prices.append(e["price"])
        devices[e["device"]] += 1
    n = max(len(events), 1)
    gaps = [b["ts"] - a["ts"] for a, b in zip(events, events[1:], strict=False)] or [0]
    dense = [counts[a] / n for a in sorted(counts)]
    dense += [h / n for h in hours]
    dense += [np.mean(dwell or [0]), np.std(dwell or [0]), max(dwell or [0])]
    dense += [math.log1p(np.mean(prices or [0])), math.log1p(max(prices or [0]))]
    dense += [devices[d] / n for d in sorted(devices)]
    dense += [math.log1p(np.median(gaps)), math.log1p(n), len(set(items)) / HIST]
    return items, dense, label


def load_batch(paths):
    items, dense, labels = [], [], []
    for p in paths:
        i, d, y = session_features(p)
        items.append(i)
        dense.append(d)
        labels.append(y)
    return (
        np.array(items, np.int32),
        np.array(dense, np.float32),
        np.array(labels, np.float32)[:, None],
    )


def build_model(n_dense):
    items = keras.Input((HIST,), dtype="int32")
    dense = keras.Input((n_dense,))
    e = keras.layers.Embedding(N_ITEMS + 1, 64, mask_zero=False)(items)
    e = keras.layers.Flatten()(e)
    h = keras.layers.Concatenate()([e, dense])
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    model = keras.Model([items, dense], out)
    model.compile(keras.optimizers.Adam(1e-3), "binary_crossentropy", metrics=["AUC"])
    return model


def train_loop(model, next_batch, steps):
    t0 = None
    for step in range(steps):
        xi, xd, y = next_batch()
        logs = model.train_on_batch([xi, xd], y, return_dict=True)
        if step == SKIP - 1:
            t0 = time.perf_counter()
        if step % 40 == 0:
            print(f"step {step} loss {logs['loss']:.4f}")
    return (time.perf_counter() - t0) / (steps - SKIP)


def dump(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    rng = random.Random(3)
    root = tempfile.mkdtemp(prefix="sessions_")
    paths = write_sessions(root, rng)
    n_dense = len(session_features(paths[0])[1])

    model = build_model(n_dense)

    def real_batch():
        return load_batch(rng.sample(paths, BATCH))

    full = train_loop(model, real_batch, STEPS)
    dump({"steps_per_second": 1.0 / full})
    print(f"train_on_batch loop: {1.0 / full:.2f} steps/s")

    if args.truth:
        cached = load_batch(paths[:BATCH])
        model2 = build_model(n_dense)
        compute = train_loop(model2, lambda: cached, STEPS)
        frac = min(1.0, max(0.0, (full - compute) / full))
        dump({"truth_input_fraction": frac})
        print(f"truth: input fraction {frac:.3f} ({full * 1e3:.1f} vs {compute * 1e3:.1f} ms/step)")


if __name__ == "__main__":
    main()
