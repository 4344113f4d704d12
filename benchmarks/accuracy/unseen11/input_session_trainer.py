"""Train a purchase-intent classifier on synthetic e-commerce click sessions stored as JSON.

Data feeding: each session is a JSON string kept in memory (as if read from a JSON-lines log).
A ``SessionTrainer`` class owns the model; its ``make_batch(step)`` method decodes the batch's
JSON records, maps item ids and event types to vocabulary indices, truncates/pads them, and
returns numpy arrays, all on the loop's own thread. Its ``train_step`` method calls Keras
``model.train_on_batch``.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

N_SESSIONS = 4000
N_ITEMS = 5000
MAX_LEN = 64
BATCH_SIZE = 128
STEPS = 250
WARMUP = 5
LOG_EVERY = 25
EVENTS = ["view", "click", "add_to_cart", "remove", "wishlist", "search"]


def make_sessions(rng):
    lines = []
    for sid in range(N_SESSIONS):
        n = int(rng.integers(10, 90))
        events = []
        t = 1_700_000_000 + int(rng.integers(0, 10_000_000))
        for _ in range(n):
            t += int(rng.integers(1, 120))
            events.append(
                {
                    "ts": t,
                    "item": f"sku-{int(rng.zipf(1.3)) % N_ITEMS:05d}",
                    "type": EVENTS[int(rng.integers(len(EVENTS)))],
                    "price": round(float(rng.gamma(2.0, 20.0)), 2),
                }
            )
        bought = sum(e["type"] == "add_to_cart" for e in events) > n / 6
        lines.append(json.dumps({"session": sid, "events": events, "purchased": bought}))
    return lines


class SessionTrainer:
    def __init__(self, lines):
        self.lines = lines
        self.item_vocab = {f"sku-{i:05d}": i + 1 for i in range(N_ITEMS)}
        self.event_vocab = {e: i + 1 for i, e in enumerate(EVENTS)}
        self.model = self.build_model()
        self.losses = []
        self.rng = np.random.default_rng(1)
        self.order = np.arange(len(lines))

    def build_model(self):
        items = tf.keras.Input(shape=(MAX_LEN,), dtype="int32")
        events = tf.keras.Input(shape=(MAX_LEN,), dtype="int32")
        prices = tf.keras.Input(shape=(MAX_LEN, 2))
        h = tf.keras.layers.Concatenate()(
            [
                tf.keras.layers.Embedding(N_ITEMS + 1, 96)(items),
                tf.keras.layers.Embedding(len(EVENTS) + 1, 16)(events),
                prices,
            ]
        )
        h = tf.keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
        h = tf.keras.layers.Conv1D(64, 5, padding="same", activation="relu")(h)
        h = tf.keras.layers.GlobalAveragePooling1D()(h)
        h = tf.keras.layers.Dense(128, activation="relu")(h)
        out = tf.keras.layers.Dense(1, activation="sigmoid")(h)
        model = tf.keras.Model([items, events, prices], out)
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss="binary_crossentropy")
        return model

    def make_batch(self, step):
        per_epoch = len(self.lines) // BATCH_SIZE
        i = step % per_epoch
        if i == 0:
            self.rng.shuffle(self.order)
        items = np.zeros((BATCH_SIZE, MAX_LEN), dtype=np.int32)
        events = np.zeros((BATCH_SIZE, MAX_LEN), dtype=np.int32)
        prices = np.zeros((BATCH_SIZE, MAX_LEN, 2), dtype=np.float32)
        labels = np.zeros((BATCH_SIZE, 1), dtype=np.float32)
        for r, k in enumerate(self.order[i * BATCH_SIZE : (i + 1) * BATCH_SIZE]):
            record = json.loads(self.lines[k])
            evs = record["events"][-MAX_LEN:]
            prev_ts = evs[0]["ts"]
            for c, ev in enumerate(evs):
                items[r, c] = self.item_vocab.get(ev["item"], 0)
                events[r, c] = self.event_vocab[ev["type"]]
                prices[r, c, 0] = np.log1p(ev["price"])
                prices[r, c, 1] = min(ev["ts"] - prev_ts, 600) / 600.0
                prev_ts = ev["ts"]
            labels[r, 0] = float(record["purchased"])
        return (items, events, prices), labels

    def train_step(self, xb, yb):
        return float(self.model.train_on_batch(xb, yb))

    def fit(self, steps, cached_batch=None):
        step_times = []
        for step in range(steps):
            t0 = time.perf_counter()
            if cached_batch is None:
                xb, yb = self.make_batch(step)
            else:
                xb, yb = cached_batch
            loss = self.train_step(xb, yb)
            self.losses.append(loss)
            if (step + 1) % LOG_EVERY == 0:
                recent = np.mean(self.losses[-LOG_EVERY:])
                print(f"step {step + 1:4d}  loss {loss:.4f}  avg{LOG_EVERY} {recent:.4f}")
            step_times.append(time.perf_counter() - t0)
        return step_times


def append_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", action="store_true", help="also measure input-wait fraction")
    args = parser.parse_args()

    tf.random.set_seed(0)
    lines = make_sessions(np.random.default_rng(0))
    times = SessionTrainer(lines).fit(STEPS)
    full = float(np.mean(times[WARMUP:]))
    append_result({"steps_per_second": 1.0 / full})
    summary = f"input_session_trainer: {STEPS} steps, {1.0 / full:.2f} steps/s"

    if args.truth:
        trainer = SessionTrainer(lines)
        cached = trainer.make_batch(0)
        times = trainer.fit(STEPS, cached_batch=cached)
        compute = float(np.mean(times[WARMUP:]))
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        summary += f", full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, truth {frac:.3f}"
    print(summary)


if __name__ == "__main__":
    main()
