"""Loan default model fed by a Python generator that featurises raw application records."""

import argparse
import json
import os
import random
import time
import zlib

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=150)
parser.add_argument("--batch-size", type=int, default=256)
args = parser.parse_args()

HASH_BUCKETS = 384
NUMERIC = ["income", "loan_amount", "term_months", "age", "debt_ratio", "credit_lines", "delinq"]
CATEGORICAL = {
    "purpose": ["car", "home", "education", "medical", "business", "debt_consolidation", "other"],
    "housing": ["rent", "own", "mortgage", "other"],
    "employment": ["salaried", "self_employed", "unemployed", "retired", "student"],
    "region": [f"R{i}" for i in range(24)],
}
N_FEATURES = (
    8
    + len(CATEGORICAL["purpose"]) * 2
    + len(NUMERIC) * 3
    + sum(len(v) for v in CATEGORICAL.values())
    + HASH_BUCKETS
)


def random_application(rng):
    rec = {
        "income": rng.lognormvariate(10.5, 0.6),
        "loan_amount": rng.lognormvariate(9.5, 0.8),
        "term_months": rng.choice([12, 24, 36, 48, 60]),
        "age": rng.randint(19, 75),
        "debt_ratio": rng.random(),
        "credit_lines": rng.randint(0, 25),
        "delinq": rng.randint(0, 4),
    }
    for k, vals in CATEGORICAL.items():
        rec[k] = rng.choice(vals)
    rec["employer"] = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
    rec["zip"] = f"{rng.randint(10000, 99999)}"
    rec["history"] = [
        (rng.expovariate(0.01), rng.randint(0, 720), rng.choice(CATEGORICAL["purpose"]))
        for _ in range(rng.randint(110, 220))
    ]
    rec["notes"] = " ".join(
        rng.choice(["late", "ok", "ref", "cosign", "new", "vip"]) for _ in range(14)
    )
    return rec


def amortization(principal, months, annual_rate):
    r = annual_rate / 12
    payment = principal * r / (1 - (1 + r) ** -months)
    balance, interest_total, half_month = principal, 0.0, months
    for m in range(months):
        interest = balance * r
        interest_total += interest
        balance -= payment - interest
        if balance < principal / 2 and half_month == months:
            half_month = m
    return payment, interest_total, half_month / months


def history_features(history):
    per_cat = {c: 0.0 for c in CATEGORICAL["purpose"]}
    recent = {c: 0.0 for c in CATEGORICAL["purpose"]}
    total, largest, decayed, n_recent = 0.0, 0.0, 0.0, 0
    for amount, days_ago, cat in sorted(history, key=lambda h: h[1]):
        per_cat[cat] += amount
        total += amount
        largest = max(largest, amount)
        decayed += amount * 0.99**days_ago
        if days_ago < 90:
            recent[cat] += amount
            n_recent += 1
    feats = [np.log1p(total), np.log1p(largest), np.log1p(decayed), n_recent / 50.0]
    feats += [per_cat[c] / (total + 1.0) for c in CATEGORICAL["purpose"]]
    feats += [recent[c] / (total + 1.0) for c in CATEGORICAL["purpose"]]
    return feats


def featurise(rec):
    payment, interest, half = amortization(rec["loan_amount"], rec["term_months"], 0.09)
    feats = [payment / rec["income"], np.log1p(interest), half, len(rec["history"]) / 100.0]
    feats += history_features(rec["history"])
    for k in NUMERIC:
        v = float(rec[k])
        feats.extend([v / 1e5, np.log1p(abs(v)), 1.0 if v > 0 else 0.0])
    for k, vals in CATEGORICAL.items():
        feats.extend([1.0 if rec[k] == v else 0.0 for v in vals])
    hashed = [0.0] * HASH_BUCKETS
    tokens = [rec["employer"], rec["zip"], rec["zip"][:3]] + rec["notes"].split()
    words = list(tokens)
    for a, b in zip(words, words[1:]):
        tokens.append(a + "_" + b)
    for a, b, c in zip(words, words[1:], words[2:]):
        tokens.append(a + "_" + b + "_" + c)
    for tok in tokens:
        hashed[zlib.crc32(tok.encode()) % HASH_BUCKETS] += 1.0
    feats.extend(hashed)
    return feats


def default_label(rec):
    score = rec["debt_ratio"] * 2 + rec["delinq"] * 0.5 - np.log(rec["income"]) * 0.1
    return 1.0 if score > 0.6 else 0.0


def application_batches(batch_size, seed=0):
    rng = random.Random(seed)
    while True:
        xs, ys, ws = [], [], []
        for _ in range(batch_size):
            rec = random_application(rng)
            xs.append(featurise(rec))
            y = default_label(rec)
            ys.append(y)
            ws.append(3.0 if y == 1.0 else 1.0)
        yield (
            np.array(xs, np.float32),
            np.array(ys, np.float32),
            np.array(ws, np.float32),
        )


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", weighted_metrics=["AUC"])
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def seconds_per_step(stamps, skip=5):
    return float(np.mean(np.diff(stamps)[skip - 1 :]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=args.steps, epochs=1, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.stamps)


def main():
    full = train(application_batches(args.batch_size))
    write_result({"steps_per_second": 1.0 / full})
    msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(application_batches(args.batch_size, seed=1))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg)


if __name__ == "__main__":
    main()
