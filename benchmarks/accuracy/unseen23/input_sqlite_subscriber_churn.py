"""Subscriber churn prediction from per-customer usage histories in SQLite.

Each training example is fetched from the database with its own query and turned
into a fixed-length event sequence plus static profile features.
"""

import argparse
import json
import os
import shutil
import sqlite3
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_CUSTOMERS = 4000
EVENTS_PER_CUSTOMER = 160
SEQ_LEN = 64
N_EVENT_FEATS = 9
N_PROFILE = 5
BATCH_SIZE = 64
TOTAL_STEPS = 220
LR = 1e-3


def build_database(path, seed=0):
    rng = np.random.default_rng(seed)
    conn = sqlite3.connect(path)
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, age REAL, tenure REAL, plan INTEGER, "
        "region INTEGER, monthly_fee REAL, churned INTEGER)"
    )
    cur.execute(
        "CREATE TABLE events (customer_id INTEGER, day INTEGER, kind INTEGER, minutes REAL, "
        "data_mb REAL, sms INTEGER, amount REAL)"
    )
    customers = []
    events = []
    for cid in range(N_CUSTOMERS):
        churned = int(rng.random() < 0.25)
        customers.append(
            (
                cid,
                float(rng.uniform(18, 80)),
                float(rng.exponential(24)),
                int(rng.integers(4)),
                int(rng.integers(12)),
                float(rng.uniform(10, 90)),
                churned,
            )
        )
        n = int(rng.integers(EVENTS_PER_CUSTOMER // 2, EVENTS_PER_CUSTOMER + 1))
        days = np.sort(rng.integers(0, 365, n))
        minutes = rng.exponential(30, n) * np.where((days > 250) & bool(churned), 0.6, 1.0)
        events.extend(
            zip(
                [cid] * n,
                days.tolist(),
                rng.integers(0, 5, n).tolist(),
                minutes.tolist(),
                rng.exponential(200, n).tolist(),
                rng.poisson(3, n).tolist(),
                rng.exponential(5, n).tolist(),
            )
        )
    cur.executemany("INSERT INTO customers VALUES (?,?,?,?,?,?,?)", customers)
    cur.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?)", events)
    cur.execute("CREATE INDEX idx_events_customer ON events(customer_id)")
    conn.commit()
    conn.close()


QUERY = (
    "SELECT c.age, c.tenure, c.plan, c.region, c.monthly_fee, c.churned, "
    "e.day, e.kind, e.minutes, e.data_mb, e.sms, e.amount "
    "FROM customers c JOIN events e ON e.customer_id = c.id "
    "WHERE c.id = ? ORDER BY e.day"
)


def customer_generator(db_path, seed):
    def gen():
        conn = sqlite3.connect(db_path, check_same_thread=False)
        rng = np.random.default_rng(seed)
        try:
            while True:
                for cid in rng.permutation(N_CUSTOMERS):
                    rows = conn.execute(QUERY, (int(cid),)).fetchall()
                    first = rows[0]
                    profile = np.array(
                        [
                            first[0] / 80.0,
                            first[1] / 48.0,
                            first[2] / 3.0,
                            first[3] / 11.0,
                            first[4] / 90.0,
                        ],
                        dtype=np.float32,
                    )
                    feats = []
                    prev_day, spend, minutes_total = 0, 0.0, 0.0
                    for r in rows:
                        spend += r[11]
                        minutes_total += r[8]
                        feats.append(
                            [
                                r[6] / 365.0,
                                (r[6] - prev_day) / 30.0,
                                r[7] / 4.0,
                                np.log1p(r[8]),
                                np.log1p(r[9]),
                                r[10] / 10.0,
                                np.log1p(r[11]),
                                np.log1p(spend),
                                np.log1p(minutes_total) / 10.0,
                            ]
                        )
                        prev_day = r[6]
                    seq = np.zeros((SEQ_LEN, N_EVENT_FEATS), dtype=np.float32)
                    recent = np.asarray(feats[-SEQ_LEN:], dtype=np.float32)
                    seq[: len(recent)] = recent
                    yield {"events": seq, "profile": profile}, np.float32(first[5])
        finally:
            conn.close()

    return gen


def make_dataset(db_path, seed=0):
    ds = tf.data.Dataset.from_generator(
        customer_generator(db_path, seed),
        output_signature=(
            {
                "events": tf.TensorSpec((SEQ_LEN, N_EVENT_FEATS), tf.float32),
                "profile": tf.TensorSpec((N_PROFILE,), tf.float32),
            },
            tf.TensorSpec((), tf.float32),
        ),
    )
    return ds.batch(BATCH_SIZE).prefetch(2).repeat()


def build_model():
    events = keras.Input((SEQ_LEN, N_EVENT_FEATS), name="events")
    profile = keras.Input((N_PROFILE,), name="profile")
    x = keras.layers.Dense(32, activation="relu")(events)
    x = keras.layers.GRU(64)(x)
    p = keras.layers.Dense(32, activation="relu")(profile)
    h = keras.layers.Concatenate()([x, p])
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    return keras.Model([events, profile], out)


def train(batches, label):
    model = build_model()
    optimizer = keras.optimizers.Adam(LR)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)[:, 0]
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step in range(TOTAL_STEPS):
        x, y = next(batches)
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if (step + 1) % 20 == 0:
            print(f"[{label}] step {step + 1}/{TOTAL_STEPS} loss={loss:.4f}")
    return float(np.mean(np.diff(times)[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u23_input_sqlite_")
    try:
        db_path = os.path.join(workdir, "subscribers.db")
        build_database(db_path)
        print(f"database ready: {os.path.getsize(db_path) / 2**20:.1f} MiB")
        full = train(iter(make_dataset(db_path)), "sqlite")
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full={full * 1000:.1f} ms/step"
        if args.truth:
            x, y = next(iter(make_dataset(db_path, seed=1)))

            def same_batch():
                while True:
                    yield x, y

            compute = train(same_batch(), "cached")
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
        print(f"subscriber_churn: {summary} steps/s={1.0 / full:.2f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
