"""Subscription churn model trained from a raw event log.

The event log (customer, event type, amount, session length, day) lives in a
pandas DataFrame.  For every training batch the loop samples customers,
selects their events and builds per-customer features with a pandas groupby
(aggregates plus a pivot of event-type counts), then calls
model.train_on_batch.
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

N_CUSTOMERS = 20000
N_EVENTS = 600000
BATCH = 256
STEPS = 400
EVENT_TYPES = ["login", "view", "purchase", "refund", "support", "share", "cancel_page", "upgrade"]


def make_events(rng):
    cust = rng.integers(0, N_CUSTOMERS, size=N_EVENTS)
    churny = (np.arange(N_CUSTOMERS) % 7 == 0)
    p = np.full(len(EVENT_TYPES), 1.0)
    etype = rng.choice(len(EVENT_TYPES), size=N_EVENTS, p=p / p.sum())
    etype = np.where(churny[cust] & (rng.random(N_EVENTS) < 0.2), 6, etype)
    df = pd.DataFrame({
        "customer": cust,
        "event": pd.Categorical.from_codes(etype, EVENT_TYPES),
        "amount": np.round(rng.gamma(2.0, 15.0, size=N_EVENTS), 2),
        "session_s": rng.exponential(300, size=N_EVENTS),
        "day": rng.integers(0, 365, size=N_EVENTS),
    })
    labels = churny.astype(np.float32)
    return df.sort_values("customer").reset_index(drop=True), labels


def build_batch(df, labels, rng):
    ids = np.sort(rng.choice(N_CUSTOMERS, size=BATCH, replace=False))
    sub = df[df["customer"].isin(ids)]
    g = sub.groupby("customer")
    agg = g.agg(n=("event", "size"), amt_sum=("amount", "sum"), amt_mean=("amount", "mean"),
                amt_std=("amount", "std"), sess_mean=("session_s", "mean"),
                sess_max=("session_s", "max"), first_day=("day", "min"), last_day=("day", "max"),
                active_days=("day", "nunique"))
    counts = sub.pivot_table(index="customer", columns="event", values="amount",
                             aggfunc="count", observed=False).fillna(0)
    recent = sub[sub["day"] > 300].groupby("customer")["amount"].sum().rename("recent_amt")
    feats = agg.join(counts).join(recent).reindex(ids).fillna(0.0)
    feats["span"] = feats["last_day"] - feats["first_day"]
    x = feats.to_numpy(dtype=np.float32)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    return x, labels[ids][:, None]


def build_model(n_features):
    inp = keras.Input((n_features,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return model


def train(next_batch, n_features):
    model = build_model(n_features)
    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(model.train_on_batch(x, y, return_dict=True)["loss"])
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[4:])), loss


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    df, labels = make_events(np.random.default_rng(0))
    rng = np.random.default_rng(1)
    probe = build_batch(df, labels, np.random.default_rng(2))
    full, loss = train(lambda: build_batch(df, labels, rng), probe[0].shape[1])
    emit({"steps_per_second": 1.0 / full})
    msg = f"churn: {STEPS} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}"
    if args.truth:
        compute, _ = train(lambda: probe, probe[0].shape[1])
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
