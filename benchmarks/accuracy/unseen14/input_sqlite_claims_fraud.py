"""Insurance claim fraud scoring, streaming claims out of the claims SQLite database."""

import argparse
import datetime as dt
import json
import math
import os
import shutil
import sqlite3
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_CLAIMS = 20_000
BATCH_SIZE = 128
STEPS = 700
SEED = 21
LINES = ["auto", "home", "travel", "health", "pet", "marine"]
CHANNELS = ["web", "phone", "broker", "agent"]
STATES = [f"S{i:02d}" for i in range(40)]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def build_database(path, rng):
    con = sqlite3.connect(path)
    con.execute(
        """CREATE TABLE claims (
            claim_id INTEGER PRIMARY KEY, policy_line TEXT, channel TEXT, state TEXT,
            policy_start TEXT, incident_date TEXT, reported_date TEXT,
            claim_amount REAL, premium REAL, prior_claims INTEGER, witness INTEGER,
            police_report INTEGER, description TEXT, is_fraud INTEGER)"""
    )
    base = dt.date(2019, 1, 1)
    rows = []
    for i in range(N_CLAIMS):
        start = base + dt.timedelta(days=int(rng.integers(0, 1500)))
        incident = start + dt.timedelta(days=int(rng.integers(1, 700)))
        reported = incident + dt.timedelta(days=int(rng.integers(0, 60)))
        amount = float(rng.lognormal(8, 1.2))
        fraud = int(rng.random() < 0.08 + 0.2 * ((reported - incident).days > 30))
        desc = " ".join(rng.choice(["rear", "collision", "water", "theft", "fire", "injury"], 5))
        rows.append(
            (
                i,
                LINES[i % len(LINES)],
                CHANNELS[int(rng.integers(0, 4))],
                STATES[int(rng.integers(0, 40))],
                start.isoformat(),
                incident.isoformat(),
                reported.isoformat(),
                amount,
                float(rng.uniform(200, 3000)),
                int(rng.poisson(0.7)),
                int(rng.random() < 0.4),
                int(rng.random() < 0.5),
                desc,
                fraud,
            )
        )
    con.executemany("INSERT INTO claims VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    con.execute(
        "CREATE TABLE payments (payment_id INTEGER PRIMARY KEY, claim_id INTEGER, "
        "paid_date TEXT, amount REAL, payee_type TEXT)"
    )
    payments = []
    for claim_id, *_rest in rows:
        reported = dt.date.fromisoformat(_rest[5])
        for _ in range(int(rng.integers(2, 9))):
            paid = reported + dt.timedelta(days=int(rng.integers(1, 120)))
            payee = ("claimant", "garage", "hospital", "lawyer")[int(rng.integers(0, 4))]
            payments.append((None, claim_id, paid.isoformat(), float(rng.lognormal(6, 1)), payee))
    con.executemany("INSERT INTO payments VALUES (?,?,?,?,?)", payments)
    con.execute("CREATE INDEX idx_payments_claim ON payments (claim_id)")
    con.commit()
    con.close()


KEYWORDS = ["rear", "collision", "water", "theft", "fire", "injury"]
PAYEES = ["claimant", "garage", "hospital", "lawyer"]
N_FEATURES = len(LINES) + len(CHANNELS) + len(STATES) + 10 + len(KEYWORDS) + 4 + len(PAYEES)


def featurize(row, con):
    (_, line, channel, state, start, incident, reported, amount, premium, prior, witness,
     police, desc, _) = row  # fmt: skip
    start_d = dt.datetime.strptime(start, "%Y-%m-%d")
    inc_d = dt.datetime.strptime(incident, "%Y-%m-%d")
    rep_d = dt.datetime.strptime(reported, "%Y-%m-%d")
    feats = [0.0] * N_FEATURES
    feats[LINES.index(line)] = 1.0
    feats[len(LINES) + CHANNELS.index(channel)] = 1.0
    feats[len(LINES) + len(CHANNELS) + STATES.index(state)] = 1.0
    o = len(LINES) + len(CHANNELS) + len(STATES)
    feats[o + 0] = math.log1p(amount) / 10
    feats[o + 1] = math.log1p(premium) / 10
    feats[o + 2] = amount / (premium * 20)
    feats[o + 3] = (inc_d - start_d).days / 365
    feats[o + 4] = (rep_d - inc_d).days / 30
    feats[o + 5] = prior / 3
    feats[o + 6] = float(witness)
    feats[o + 7] = float(police)
    feats[o + 8] = inc_d.weekday() / 6
    feats[o + 9] = inc_d.month / 12
    words = desc.split()
    for k, kw in enumerate(KEYWORDS):
        feats[o + 10 + k] = words.count(kw) / 5
    # payment history for this claim
    pays = con.execute(
        "SELECT paid_date, amount, payee_type FROM payments WHERE claim_id = ? ORDER BY paid_date",
        (row[0],),
    ).fetchall()
    o += 10 + len(KEYWORDS)
    if pays:
        dates = [dt.datetime.strptime(d, "%Y-%m-%d") for d, _, _ in pays]
        amounts = [a for _, a, _ in pays]
        feats[o + 0] = len(pays) / 8
        feats[o + 1] = math.log1p(sum(amounts)) / 10
        feats[o + 2] = (dates[0] - rep_d).days / 120
        feats[o + 3] = (dates[-1] - dates[0]).days / 120
        for _, _, payee in pays:
            feats[o + 4 + PAYEES.index(payee)] += 1 / len(pays)
    return feats


def claim_batches(db_path, batch_size):
    con = sqlite3.connect(db_path, check_same_thread=False)
    while True:
        rows = con.execute("SELECT * FROM claims ORDER BY RANDOM()").fetchall()
        xs, ys = [], []
        for row in rows:
            xs.append(featurize(row, con))
            ys.append(row[-1])
            if len(xs) == batch_size:
                yield np.asarray(xs, dtype=np.float32), np.asarray(ys, dtype=np.float32)
                xs, ys = [], []


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dropout(0.3)(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(name="auc")]
    )
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    workdir = tempfile.mkdtemp(prefix="u14_input_sqlite_claims_fraud_")
    try:
        db_path = os.path.join(workdir, "claims.db")
        build_database(db_path, rng)
        print(f"claims db ready: {N_CLAIMS} rows, {N_FEATURES} features")

        model = build_model()
        clock = StepClock()
        t0 = time.perf_counter()
        hist = model.fit(
            claim_batches(db_path, BATCH_SIZE),
            epochs=1,
            steps_per_epoch=args.steps,
            callbacks=[clock],
            verbose=0,
        )
        full = clock.seconds_per_step()
        print(
            f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
            f"auc={hist.history['auc'][-1]:.3f}"
        )
        out_path = os.environ.get("ACCURACY_OUT")
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

        if args.truth:
            batch = next(claim_batches(db_path, BATCH_SIZE))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            clock2 = StepClock()
            model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
            compute = clock2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            if out_path:
                with open(out_path, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            print(f"truth: full={full * 1000:.2f}ms compute={compute * 1000:.2f}ms frac={frac:.2f}")
        print(f"claims fraud MLP: {1.0 / full:.1f} steps/s ({full * 1000:.2f} ms/step)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
