"""Next-item recommendation trained from raw JSON event logs replayed per user."""

import argparse
import json

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

USERS, ITEMS, HISTORY, BATCH, STEPS = 4000, 8000, 50, 64, 200
EVENTS = ["view", "view", "view", "click", "cart", "purchase"]


def make_logs(seed=0):
    """One JSON line per event, grouped by user, like an export from an events table."""
    rng = np.random.default_rng(seed)
    logs = []
    for user in range(USERS):
        taste = rng.integers(0, ITEMS, 6)
        lines, clock = [], 1_700_000_000 + int(rng.integers(0, 10**6))
        for _ in range(int(rng.integers(60, 160))):
            clock += int(rng.exponential(300))
            item = int((taste[rng.integers(6)] + rng.integers(-40, 40)) % ITEMS)
            lines.append(
                json.dumps(
                    {
                        "ts": clock,
                        "user": f"u{user:06d}",
                        "item": f"sku-{item:06d}",
                        "event": EVENTS[rng.integers(len(EVENTS))],
                        "price": round(float(rng.lognormal(3, 1)), 2),
                        "device": ["ios", "android", "web"][rng.integers(3)],
                    }
                )
            )
        logs.append(lines)
    return logs


def sessions(logs, seed=0):
    rng = np.random.default_rng(seed)
    weights = {"view": 1.0, "click": 2.0, "cart": 3.0, "purchase": 4.0}
    while True:
        lines = logs[rng.integers(len(logs))]
        cut = int(rng.integers(20, len(lines)))
        events = [json.loads(line) for line in lines[: cut + 1]]
        events.sort(key=lambda e: e["ts"])
        items, kinds, gaps, spend, counts = [], [], [], 0.0, {}
        previous = events[0]["ts"]
        for e in events[:-1]:
            item = int(e["item"].split("-")[1])
            counts[item] = counts.get(item, 0) + weights[e["event"]]
            items.append(item + 1)
            kinds.append(list(weights).index(e["event"]))
            gaps.append(np.log1p(e["ts"] - previous))
            previous = e["ts"]
            if e["event"] == "purchase":
                spend += e["price"]
        favourite = max(counts, key=counts.get)
        pad = HISTORY - min(len(items), HISTORY)
        yield (
            {
                "items": np.array([0] * pad + items[-HISTORY:], np.int32),
                "kinds": np.array([0] * pad + kinds[-HISTORY:], np.int32),
                "context": np.array(
                    [
                        np.log1p(spend),
                        len(events) / 100,
                        np.mean(gaps),
                        favourite / ITEMS,
                        events[-2]["device"] == "web",
                        counts[favourite] / len(events),
                    ],
                    np.float32,
                ),
            },
            np.int32(int(events[-1]["item"].split("-")[1])),
        )


def session_dataset(logs, seed=0):
    signature = (
        {
            "items": tf.TensorSpec((HISTORY,), tf.int32),
            "kinds": tf.TensorSpec((HISTORY,), tf.int32),
            "context": tf.TensorSpec((6,), tf.float32),
        },
        tf.TensorSpec((), tf.int32),
    )
    return (
        tf.data.Dataset.from_generator(lambda: sessions(logs, seed), output_signature=signature)
        .batch(BATCH)
        .prefetch(2)
    )


def build_model():
    items = keras.Input((HISTORY,), dtype="int32", name="items")
    kinds = keras.Input((HISTORY,), dtype="int32", name="kinds")
    context = keras.Input((6,), name="context")
    h = keras.layers.Embedding(ITEMS + 1, 32, mask_zero=True)(items)
    h = h + keras.layers.Embedding(4, 32)(kinds)
    h = keras.layers.GRU(64)(h)
    h = keras.layers.Concatenate()([h, keras.layers.Dense(32, activation="relu")(context)])
    h = keras.layers.Dense(128, activation="relu")(h)
    scores = keras.layers.Dense(ITEMS)(h)
    model = keras.Model({"items": items, "kinds": kinds, "context": context}, scores)
    model.compile(
        keras.optimizers.Adam(1e-3),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseTopKCategoricalAccuracy(k=20)],
    )
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    logs = make_logs()
    model = build_model()
    timed_fit(model, session_dataset(logs), STEPS)
    measure(model, lambda: session_dataset(logs, 1), STEPS)
