"""Scores loan applications with a wide-and-deep model over hashed feature crosses."""

import argparse
import hashlib

import keras
import numpy as np
from truth import measure, timed_fit

APPLICANTS, BATCH, STEPS, BUCKETS = 20000, 256, 180, 50_000
PURPOSES = ["car", "house", "education", "medical", "business", "wedding", "travel", "debt"]
REGIONS = [f"region_{i:02d}" for i in range(40)]
JOBS = ["clerk", "nurse", "driver", "teacher", "engineer", "farmer", "owner", "none", "retired"]
CROSSES = [
    ("purpose", "region"),
    ("job", "age_band"),
    ("purpose", "term"),
    ("region", "job"),
    ("age_band", "income_band"),
    ("term", "income_band"),
]


def make_applicants(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(APPLICANTS):
        rows.append(
            {
                "age": int(rng.integers(18, 80)),
                "income": float(rng.lognormal(10.5, 0.6)),
                "amount": float(rng.lognormal(9.0, 0.9)),
                "term": int(rng.choice([12, 24, 36, 48, 60])),
                "purpose": PURPOSES[rng.integers(len(PURPOSES))],
                "region": REGIONS[rng.integers(len(REGIONS))],
                "job": JOBS[rng.integers(len(JOBS))],
                "history": [int(x) for x in rng.integers(0, 3, int(rng.integers(24, 300)))],
            }
        )
    return rows


def bucket(text):
    return int.from_bytes(hashlib.md5(text.encode()).digest()[:4], "little") % BUCKETS


def encode(row):
    row = dict(row)
    row["age_band"] = str(row["age"] // 10)
    row["income_band"] = str(int(np.log2(row["income"])))
    row["term"] = str(row["term"])
    late = row["history"].count(1) + 3 * row["history"].count(2)
    streak = best = 0
    balance, rate, arrears, worst = row["amount"], 0.09 / 12, 0.0, 0.0
    instalment = row["amount"] * rate / (1 - (1 + rate) ** -int(row["term"]))
    for h in row["history"]:
        streak = streak + 1 if h == 0 else 0
        best = max(best, streak)
        balance += balance * rate
        paid = instalment * (1.0, 0.5, 0.0)[h]
        arrears = max(0.0, arrears + instalment - paid - (instalment if h == 0 else 0))
        balance = max(0.0, balance - paid)
        worst = max(worst, arrears / instalment)
    numeric = [
        (row["age"] - 45) / 15,
        np.log(row["income"]) - 10.5,
        np.log(row["amount"]) - 9.0,
        row["amount"] / row["income"],
        len(row["history"]) / 20,
        late / 10,
        best / 20,
        float(int(row["term"]) > 36),
        balance / row["amount"],
        worst / 6,
    ]
    crosses = [bucket(f"{a}={row[a]}&{b}={row[b]}") for a, b in CROSSES]
    crosses += [bucket(f"{a}={row[a]}&{b}={row[b]}&worst={int(worst)}") for a, b in CROSSES]
    singles = [bucket(f"{k}={row[k]}") for k in ("purpose", "region", "job", "age_band")]
    risk = numeric[3] * 2 + late / 8 - best / 30 + (row["purpose"] in ("travel", "wedding"))
    return numeric, crosses, singles, float(risk > 1.0)


class ApplicationBatches(keras.utils.PyDataset):
    def __init__(self, rows, seed, **kwargs):
        super().__init__(**kwargs)
        self.rows = rows
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, index):
        rng = np.random.default_rng((self.seed, index))
        picked = [self.rows[i] for i in rng.integers(0, len(self.rows), BATCH)]
        numeric, crosses, singles, labels = zip(*map(encode, picked), strict=True)
        inputs = {
            "numeric": np.array(numeric, np.float32),
            "crosses": np.array(crosses, np.int32),
            "singles": np.array(singles, np.int32),
        }
        return inputs, np.array(labels, np.float32)


def build_model():
    numeric = keras.Input((10,), name="numeric")
    crosses = keras.Input((2 * len(CROSSES),), dtype="int32", name="crosses")
    singles = keras.Input((4,), dtype="int32", name="singles")
    wide = keras.layers.Flatten()(keras.layers.Embedding(BUCKETS, 1)(crosses))
    embedded = keras.layers.Flatten()(keras.layers.Embedding(BUCKETS, 32)(singles))
    h = keras.layers.Concatenate()([numeric, embedded])
    for width in (768, 768, 384):
        h = keras.layers.Dense(width, activation="relu")(h)
    deep = keras.layers.Dense(1)(h)
    logit = keras.layers.Add()([deep, keras.layers.Dense(1)(wide)])
    model = keras.Model(
        {"numeric": numeric, "crosses": crosses, "singles": singles},
        keras.layers.Activation("sigmoid")(logit),
    )
    model.compile(keras.optimizers.Adam(5e-4), "binary_crossentropy", metrics=["AUC"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    rows = make_applicants()
    model = build_model()

    def applications():
        return ApplicationBatches(rows, seed=3, workers=1, use_multiprocessing=False)

    timed_fit(model, applications(), STEPS)
    measure(model, applications, STEPS)
