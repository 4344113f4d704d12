"""Insurance-claim fraud scoring trained straight from the claims database.

A SQLite copy of the claims table is written at start-up; each training batch
is fetched with one query and turned into features row by row.
"""

import argparse
import datetime
import json
import math
import os
import shutil
import sqlite3
import tempfile
import time
import zlib

import numpy as np
import tensorflow as tf
import keras

N_ROWS = 60000
BATCH = 128
STEPS = 150
REGIONS = [f"R{i:02d}" for i in range(40)]
VEHICLES = ["sedan", "suv", "van", "truck", "coupe", "wagon", "motorbike", "ev"]
CHANNELS = ["agent", "web", "phone", "broker"]
TEXT_BUCKETS = 256
N_FEATURES = len(REGIONS) + len(VEHICLES) + len(CHANNELS) + 10 + 6 + TEXT_BUCKETS
WORDS = "rear front collision theft glass flood fire hail parked highway night injury tow".split()
LR = 1e-3


def write_database(path, seed=0):
    rng = np.random.default_rng(seed)
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE claims (id INTEGER PRIMARY KEY, region TEXT, vehicle TEXT, channel TEXT,"
        " age INTEGER, premium REAL, amount REAL, incident_date TEXT, policy_start TEXT,"
        " notes TEXT, fraud INTEGER)"
    )
    start = datetime.date(2018, 1, 1)
    rows = []
    for i in range(N_ROWS):
        amount = float(rng.lognormal(7, 1))
        d0 = start + datetime.timedelta(days=int(rng.integers(0, 1500)))
        d1 = d0 + datetime.timedelta(days=int(rng.integers(1, 900)))
        notes = " ".join(rng.choice(WORDS, size=int(rng.integers(15, 40))))
        fraud = int((amount > 2000 and (d1 - d0).days < 300) or rng.random() < 0.05)
        rows.append(
            (
                i,
                REGIONS[int(rng.integers(0, len(REGIONS)))],
                VEHICLES[int(rng.integers(0, len(VEHICLES)))],
                CHANNELS[int(rng.integers(0, len(CHANNELS)))],
                int(rng.integers(18, 85)),
                float(rng.uniform(200, 3000)),
                amount,
                d1.isoformat(),
                d0.isoformat(),
                notes,
                fraud,
            )
        )
    con.executemany("INSERT INTO claims VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    con.commit()
    con.close()


def row_features(row):
    region, vehicle, channel, age, premium, amount, incident, policy_start, notes = row
    f = np.zeros(N_FEATURES, dtype=np.float32)
    o = 0
    f[o + REGIONS.index(region)] = 1.0
    o += len(REGIONS)
    f[o + VEHICLES.index(vehicle)] = 1.0
    o += len(VEHICLES)
    f[o + CHANNELS.index(channel)] = 1.0
    o += len(CHANNELS)
    f[o + min(age // 8, 9)] = 1.0
    o += 10
    d1 = datetime.datetime.strptime(incident, "%Y-%m-%d")
    d0 = datetime.datetime.strptime(policy_start, "%Y-%m-%d")
    tenure = (d1 - d0).days
    f[o : o + 6] = [
        math.log1p(premium) / 8,
        math.log1p(amount) / 10,
        math.log1p(tenure) / 7,
        d1.weekday() / 6,
        d1.month / 12,
        amount / (premium + 1) / 10,
    ]
    o += 6
    for word in notes.split():
        f[o + zlib.crc32(word.encode()) % TEXT_BUCKETS] += 1.0
        padded = f"#{word}#"
        for k in range(len(padded) - 2):
            f[o + zlib.crc32(padded[k : k + 3].encode()) % TEXT_BUCKETS] += 0.2
    for a, b in zip(notes.split(), notes.split()[1:]):
        f[o + zlib.crc32((a + "_" + b).encode()) % TEXT_BUCKETS] += 0.5
    return f


def claim_batches(db_path, batch_size):
    con = sqlite3.connect(db_path)
    n_batches = N_ROWS // batch_size
    order = np.random.default_rng(1).permutation(n_batches)
    k = 0
    while True:
        lo = int(order[k % n_batches]) * batch_size
        cur = con.execute(
            "SELECT region, vehicle, channel, age, premium, amount, incident_date, policy_start,"
            " notes, fraud FROM claims WHERE id >= ? AND id < ? ORDER BY id",
            (lo, lo + batch_size),
        )
        rows = cur.fetchall()
        x = np.stack([row_features(r[:-1]) for r in rows])
        y = np.array([[r[-1]] for r in rows], dtype=np.float32)
        k += 1
        yield x, y


def build_model():
    return keras.Sequential(
        [
            keras.Input((N_FEATURES,)),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(1),
        ]
    )


def train(next_batch, label):
    model = build_model()
    optimizer = keras.optimizers.Adam(LR)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.05)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
        if step % 50 == 0:
            print(f"[{label}] step {step}: loss {loss:.4f}")
    return float(np.mean(np.diff(stamps)[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u28_input_sqlite_claims_")
    try:
        db_path = os.path.join(workdir, "claims.db")
        write_database(db_path)
        batches = claim_batches(db_path, BATCH)
        full = train(lambda: next(batches), "claims")
        write_out({"steps_per_second": 1.0 / full})
        summary = f"claims fraud: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

        if args.truth:
            xb, yb = next(claim_batches(db_path, BATCH))
            compute = train(lambda: (xb, yb), "cached")
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
