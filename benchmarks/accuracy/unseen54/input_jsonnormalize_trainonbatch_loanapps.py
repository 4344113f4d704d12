"""Loan-default scoring from nested JSON application records.

Each mortgage application is stored as one nested JSON document (applicant,
optional co-applicant, property, and a variable-length list of credit-bureau
tradelines) in a JSON-lines file.  For every batch the loop json-decodes the
chosen lines, flattens them with pandas.json_normalize (meta fields plus a
tradeline record_path), aggregates tradelines per application with groupby and
one-hot encodes categoricals before calling model.train_on_batch.
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pandas as pd

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras  # noqa: E402

N_APPS = 6000
BATCH = 256
STEPS = 160
STATES = ["CA", "TX", "NY", "FL", "WA", "IL", "GA", "OH"]
TYPES = ["mortgage", "auto", "card", "student", "personal"]
PROPS = ["single_family", "condo", "townhouse", "multi_family"]
META = [["app_id"], ["applicant", "income"], ["applicant", "age"], ["applicant", "fico"],
        ["applicant", "employment_years"], ["property", "value"], ["property", "type"],
        ["property", "state"], ["loan", "amount"], ["loan", "term"], ["loan", "rate"]]


def write_apps(path, rng):
    labels = np.zeros(N_APPS, np.float32)
    with open(path, "w") as fh:
        for i in range(N_APPS):
            fico = int(rng.normal(700, 60))
            income = float(rng.lognormal(11, 0.5))
            amount = float(income * rng.uniform(2, 6))
            trades = [{"type": str(rng.choice(TYPES)), "balance": float(rng.lognormal(9, 1)),
                       "limit": float(rng.lognormal(9.5, 1)), "months_open": int(rng.integers(1, 240)),
                       "late_30": int(rng.poisson(0.3)), "late_90": int(rng.poisson(0.05))}
                      for _ in range(rng.integers(1, 14))]
            doc = {"app_id": f"A{i:07d}",
                   "applicant": {"income": income, "age": int(rng.integers(21, 75)), "fico": fico,
                                 "employment_years": float(rng.exponential(6))},
                   "property": {"value": amount * rng.uniform(1.1, 1.6), "type": str(rng.choice(PROPS)),
                                "state": str(rng.choice(STATES))},
                   "loan": {"amount": amount, "term": int(rng.choice([180, 360])),
                            "rate": float(rng.uniform(3, 8))},
                   "tradelines": trades}
            if rng.random() < 0.4:
                doc["co_applicant"] = {"income": float(rng.lognormal(10.5, 0.6))}
            risk = (680 - fico) / 50 + sum(t["late_90"] for t in trades) + amount / income / 4 - 1.5
            labels[i] = float(rng.random() < 1 / (1 + np.exp(-risk)))
            fh.write(json.dumps(doc) + "\n")
    return labels


def featurize(lines):
    docs = [json.loads(s) for s in lines]
    apps = pd.json_normalize(docs, sep="_")
    trades = pd.json_normalize(docs, record_path="tradelines", meta=["app_id"])
    trades["util"] = trades["balance"] / trades["limit"]
    agg = trades.groupby("app_id").agg(n_trades=("type", "size"), bal_sum=("balance", "sum"),
                                       util_mean=("util", "mean"), util_max=("util", "max"),
                                       late30=("late_30", "sum"), late90=("late_90", "sum"),
                                       age_max=("months_open", "max"))
    mix = pd.crosstab(trades["app_id"], trades["type"]).reindex(columns=TYPES, fill_value=0)
    df = apps.drop(columns=["tradelines"]).set_index("app_id").join(agg).join(mix)
    if "co_applicant_income" not in df:
        df["co_applicant_income"] = np.nan
    df["has_co"] = df["co_applicant_income"].notna().astype(float)
    df["co_applicant_income"] = df["co_applicant_income"].fillna(0.0)
    df["ltv"] = df["loan_amount"] / df["property_value"]
    df["dti"] = df["loan_amount"] / (df["applicant_income"] + df["co_applicant_income"])
    cats = pd.get_dummies(df[["property_type", "property_state"]].astype(
        pd.CategoricalDtype(PROPS + STATES)), dtype=float)
    num = df.drop(columns=["property_type", "property_state"]).astype(float)
    num = num[sorted(num.columns)]
    num = np.log1p(num.clip(lower=0))
    return np.concatenate([num.to_numpy(), cats.to_numpy()], 1).astype(np.float32)


def build_model(n_in):
    m = keras.Sequential([keras.Input((n_in,)),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def train(next_batch, n_in):
    keras.utils.set_random_seed(4)
    model = build_model(n_in)
    times = []
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(model.train_on_batch(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_input_jsonnormalize_trainonbatch_loanapps_")
    try:
        path = os.path.join(tmp, "applications.jsonl")
        labels = write_apps(path, np.random.default_rng(54))
        with open(path) as fh:
            lines = fh.readlines()
        rng = np.random.default_rng(8)

        def next_batch():
            idx = np.sort(rng.choice(N_APPS, BATCH, replace=False))
            return featurize([lines[i] for i in idx]), labels[idx][:, None]

        n_in = next_batch()[0].shape[1]
        full, loss = train(next_batch, n_in)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            fixed = next_batch()
            comp, _ = train(lambda: fixed, n_in)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"input_jsonnormalize_trainonbatch_loanapps: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
