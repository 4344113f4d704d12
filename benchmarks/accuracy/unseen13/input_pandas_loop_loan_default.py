"""Loan default model trained with a hand-written loop over pandas feature batches."""

import argparse
import json
import os
import time

import numpy as np
import pandas as pd

import keras
import tensorflow as tf

N_LOANS = 120_000
N_BORROWERS = 30_000
BATCH_SIZE = 512
TRAIN_STEPS = 220
LEARNING_RATE = 1e-3
SEED = 5

CATEGORICAL = {
    "grade": list("ABCDEFG"),
    "purpose": ["debt", "card", "home", "car", "medical", "business", "other"],
    "home_ownership": ["rent", "own", "mortgage", "other"],
    "state": [f"S{i:02d}" for i in range(40)],
}
NUMERIC = ["amount", "rate", "term", "income", "dti", "revol_util", "open_acc", "age_months"]


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def mean_step_seconds(stamps, start, skip=5):
    times = [start] + stamps
    return float(np.mean(np.diff(times)[skip:]))


# ---------------------------------------------------------------- data
def make_loan_table(seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "borrower_id": rng.integers(0, N_BORROWERS, N_LOANS),
            "amount": rng.lognormal(9, 0.6, N_LOANS),
            "rate": rng.uniform(0.05, 0.3, N_LOANS),
            "term": rng.choice([36, 60], N_LOANS),
            "income": rng.lognormal(11, 0.5, N_LOANS),
            "dti": rng.uniform(0, 40, N_LOANS),
            "revol_util": rng.uniform(0, 1.2, N_LOANS),
            "open_acc": rng.poisson(9, N_LOANS),
            "age_months": rng.integers(1, 120, N_LOANS),
        }
    )
    for col, values in CATEGORICAL.items():
        df[col] = pd.Categorical(rng.choice(values, N_LOANS), categories=values)
    df.loc[rng.random(N_LOANS) < 0.05, "income"] = np.nan
    df.loc[rng.random(N_LOANS) < 0.03, "revol_util"] = np.nan
    logit = 3 * df["rate"] + 0.04 * df["dti"] - 0.3 * np.log(df["income"].fillna(5e4) / 5e4)
    df["default"] = (rng.random(N_LOANS) < 1 / (1 + np.exp(-(logit - 3)))).astype("int32")
    return df


RISK_BUCKETS = ["prime", "near_prime", "subprime", "deep_subprime"]


def risk_bucket(row):
    score = 0
    if row["grade"] in ("E", "F", "G"):
        score += 2
    if row["dti"] > 30 or row["revol_util"] > 0.9:
        score += 1
    if row["pti"] > 0.25:
        score += 1
    return RISK_BUCKETS[min(score, 3)]


def build_features(df, rows):
    batch = df.iloc[rows].copy()
    agg = df.groupby("borrower_id").agg(
        n_loans=("amount", "size"),
        mean_amount=("amount", "mean"),
        max_rate=("rate", "max"),
        mean_dti=("dti", "mean"),
    )
    batch = batch.merge(agg, left_on="borrower_id", right_index=True, how="left")
    batch["income"] = batch["income"].fillna(batch["income"].median())
    batch["revol_util"] = batch["revol_util"].fillna(0.5)
    batch["log_income"] = np.log1p(batch["income"])
    batch["log_amount"] = np.log1p(batch["amount"])
    batch["payment"] = (
        batch["amount"] * batch["rate"] / 12 / (1 - (1 + batch["rate"] / 12) ** -batch["term"])
    )
    batch["pti"] = batch["payment"] * 12 / batch["income"]
    batch["risk_bucket"] = pd.Categorical(batch.apply(risk_bucket, axis=1), categories=RISK_BUCKETS)
    numeric_cols = NUMERIC + [
        "log_income",
        "log_amount",
        "payment",
        "pti",
        "n_loans",
        "mean_amount",
        "max_rate",
        "mean_dti",
    ]
    num = batch[numeric_cols].astype("float64")
    num = (num - num.mean()) / (num.std() + 1e-6)
    dummies = pd.get_dummies(batch[list(CATEGORICAL) + ["risk_bucket"]], dtype="float32")
    x = pd.concat([num, dummies], axis=1).to_numpy(dtype="float32")
    y = batch["default"].to_numpy(dtype="float32")
    return x, y


# ---------------------------------------------------------------- model
def build_model(n_features):
    return keras.Sequential(
        [
            keras.Input(shape=(n_features,)),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dense(1),
        ],
        name="loan_mlp",
    )


def train(df, fixed_batch=None):
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    n_features = build_features(df, np.arange(8))[0].shape[1]
    model = build_model(n_features)
    optimizer = keras.optimizers.Adam(LEARNING_RATE)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    auc = keras.metrics.AUC(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.squeeze(model(x, training=True), -1)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        auc.update_state(y, logits)
        return loss

    stamps = []
    start = time.perf_counter()
    for step in range(TRAIN_STEPS):
        if fixed_batch is None:
            rows = rng.choice(len(df), BATCH_SIZE, replace=False)
            x, y = build_features(df, rows)
        else:
            x, y = fixed_batch
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:3d}  loss {loss:.4f}  auc {float(auc.result()):.3f}")
    return mean_step_seconds(stamps, start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    df = make_loan_table(SEED)
    print(f"loan table: {df.shape}, default rate {df['default'].mean():.3f}")

    sec = train(df)
    append_result(steps_per_second=1.0 / sec)
    summary = f"loans: {sec * 1000:.1f} ms/step"

    if args.truth:
        rows = np.random.default_rng(SEED + 1).choice(len(df), BATCH_SIZE, replace=False)
        compute = train(df, fixed_batch=build_features(df, rows))
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
