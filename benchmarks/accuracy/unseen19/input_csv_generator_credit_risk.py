"""Credit default risk model trained batch-by-batch from a loan-book CSV export."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=120000)
parser.add_argument("--batch-size", type=int, default=512)
parser.add_argument("--steps", type=int, default=120)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

NUMERIC = [
    "loan_amnt",
    "annual_inc",
    "dti",
    "int_rate",
    "installment",
    "revol_bal",
    "revol_util",
    "open_acc",
    "total_acc",
    "delinq_2yrs",
    "inq_last_6mths",
    "mths_since_last_delinq",
    "pub_rec",
    "emp_length",
    "fico_low",
    "fico_high",
]
CATEGORICAL = {
    "grade": list("ABCDEFG"),
    "home_ownership": ["RENT", "OWN", "MORTGAGE", "OTHER"],
    "purpose": [
        "debt_consolidation",
        "credit_card",
        "home_improvement",
        "car",
        "medical",
        "small_business",
        "other",
    ],
    "term": ["36 months", "60 months"],
    "addr_state": [f"S{i:02d}" for i in range(50)],
    "verification_status": ["Verified", "Source Verified", "Not Verified"],
}


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((int(self.model.optimizer.iterations.numpy()), time.perf_counter()))

    def seconds_per_step(self, skip=5):
        marks = [m for m in self.marks if m[0] >= skip]
        return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


def write_loan_book(path):
    rng = np.random.default_rng(5)
    n = args.rows
    df = pd.DataFrame({c: rng.gamma(2.0, 10.0, size=n).round(3) for c in NUMERIC})
    for c, cats in CATEGORICAL.items():
        df[c] = rng.choice(cats, size=n)
    df["issue_d"] = pd.Timestamp("2015-01-01") + pd.to_timedelta(
        rng.integers(0, 2000, size=n), unit="D"
    )
    df["default"] = (rng.random(n) < 0.15).astype(int)
    df.to_csv(path, index=False)


def loan_batches(path, stats, batch_size):
    mean, std = stats
    while True:
        for start in range(0, args.rows - batch_size, batch_size):
            chunk = pd.read_csv(path, skiprows=range(1, start + 1), nrows=batch_size)
            num = ((chunk[NUMERIC] - mean) / std).fillna(0.0).to_numpy(np.float32)
            onehots = []
            for c, cats in CATEGORICAL.items():
                col = pd.Categorical(chunk[c], categories=cats)
                onehots.append(pd.get_dummies(col).to_numpy(np.float32))
            issue = pd.to_datetime(chunk["issue_d"])
            season = np.stack(
                [np.sin(issue.dt.month / 12 * 2 * np.pi), np.cos(issue.dt.month / 12 * 2 * np.pi)],
                1,
            )
            x = np.concatenate([num] + onehots + [season.astype(np.float32)], axis=1)
            y = chunk["default"].to_numpy(np.float32)
            yield x, y


def build_model(n_features):
    model = keras.Sequential(
        [
            keras.Input(shape=(n_features,)),
            keras.layers.Dense(768, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(768, activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(name="auc")]
    )
    return model


work_dir = tempfile.mkdtemp(prefix="u19_csv_credit_")
try:
    csv_path = os.path.join(work_dir, "loan_book.csv")
    t0 = time.perf_counter()
    write_loan_book(csv_path)
    sample = pd.read_csv(csv_path, nrows=5000)
    stats = (sample[NUMERIC].mean(), sample[NUMERIC].std() + 1e-6)
    print(f"wrote {args.rows} loans in {time.perf_counter() - t0:.1f}s")

    gen = loan_batches(csv_path, stats, args.batch_size)
    x0, _ = next(gen)
    n_features = x0.shape[1]

    clock = StepClock()
    model = build_model(n_features)
    model.fit(
        loan_batches(csv_path, stats, args.batch_size),
        epochs=1,
        steps_per_epoch=args.steps,
        callbacks=[clock],
        verbose=2,
    )
    sec_full = clock.seconds_per_step()
    report("steps_per_second", 1.0 / sec_full)
    print(f"credit risk: {args.steps} steps, {sec_full * 1000:.1f} ms/step")

    if args.truth:
        batch = next(loan_batches(csv_path, stats, args.batch_size))
        clock2 = StepClock()
        model2 = build_model(n_features)
        model2.fit(
            tf.data.Dataset.from_tensors(batch).repeat(),
            epochs=1,
            steps_per_epoch=args.steps,
            callbacks=[clock2],
            verbose=0,
        )
        sec_cached = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
        report("truth_input_fraction", frac)
        print(
            f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
        )
finally:
    shutil.rmtree(work_dir, ignore_errors=True)
