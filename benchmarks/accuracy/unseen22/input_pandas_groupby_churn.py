"""Telecom churn prediction from per-customer usage event sequences."""

import argparse
import json
import os
import time

import numpy as np
import pandas as pd

import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--batch-size", type=int, default=64)
args = parser.parse_args()

NUM_CUSTOMERS = 6000
EVENTS = 400_000
MAX_LEN = 60
FEATURES = ["minutes", "data_mb", "sms", "topup", "roaming", "support_calls"]
BATCH = args.batch_size
STEPS = args.steps

rng = np.random.default_rng(11)
events = pd.DataFrame(
    {
        "customer_id": rng.integers(0, NUM_CUSTOMERS, EVENTS),
        "day": rng.integers(0, 365, EVENTS),
        "minutes": rng.gamma(2.0, 5.0, EVENTS),
        "data_mb": rng.gamma(1.5, 80.0, EVENTS),
        "sms": rng.poisson(2, EVENTS).astype(float),
        "topup": rng.random(EVENTS) < 0.05,
        "roaming": rng.random(EVENTS) < 0.02,
        "support_calls": rng.poisson(0.1, EVENTS).astype(float),
    }
)
churn = pd.Series(rng.random(NUM_CUSTOMERS) < 0.2, name="churned").astype(np.float32)


def make_batch(customer_ids):
    sub = events[events["customer_id"].isin(customer_ids)]
    x = np.zeros((len(customer_ids), MAX_LEN, len(FEATURES)), dtype=np.float32)
    mask_len = {}
    for cid, grp in sub.groupby("customer_id"):
        grp = grp.sort_values("day").tail(MAX_LEN)
        feats = grp[FEATURES].astype(np.float32).to_numpy()
        feats = np.log1p(feats)
        mask_len[cid] = feats
    for i, cid in enumerate(customer_ids):
        feats = mask_len.get(cid)
        if feats is not None:
            x[i, MAX_LEN - len(feats) :] = feats
    y = churn.loc[customer_ids].to_numpy().reshape(-1, 1)
    return x, y


def build_model():
    inp = keras.Input((MAX_LEN, len(FEATURES)))
    x = keras.layers.Masking(0.0)(inp)
    x = keras.layers.LSTM(96, return_sequences=True)(x)
    x = keras.layers.LSTM(64)(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return model


def train(batch_fn):
    keras.utils.set_random_seed(5)
    model = build_model()
    order = np.random.default_rng(0).permutation(NUM_CUSTOMERS)
    durations = []
    last = time.perf_counter()
    for step in range(STEPS):
        start = (step * BATCH) % (NUM_CUSTOMERS - BATCH)
        x, y = batch_fn(order[start : start + BATCH])
        loss, auc = model.train_on_batch(x, y)
        now = time.perf_counter()
        durations.append(now - last)
        last = now
        if step % 20 == 0:
            print(f"step {step}: loss={float(loss):.4f} auc={float(auc):.3f}")
    return float(np.mean(durations[5:]))


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(make_batch)
append_out({"steps_per_second": 1.0 / full})
msg = f"churn: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
if args.truth:
    fixed = make_batch(np.arange(BATCH))
    compute = train(lambda ids: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
