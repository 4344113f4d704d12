"""Insurance claim severity regression from a SQLite claims store."""

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

N_CLAIMS = 30000
BATCH_SIZE = 256
STEPS_PER_EPOCH = 60
EPOCHS = 3
N_FEATURES = 96
REGIONS = ["north", "south", "east", "west", "central", "coastal", "mountain", "metro"]
CODES = [f"P{i:03d}" for i in range(40)]


def build_database(path, rng):
    conn = sqlite3.connect(path)
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE claims (id INTEGER PRIMARY KEY, region TEXT, policy_age REAL,"
        " insured_age REAL, vehicle_value REAL, prior_claims INTEGER, notes TEXT,"
        " codes TEXT, severity REAL)"
    )
    words = ["rear", "front", "glass", "theft", "flood", "hail", "minor", "total", "injury"]
    rows = []
    for i in range(N_CLAIMS):
        region = REGIONS[rng.integers(len(REGIONS))]
        codes = ",".join(rng.choice(CODES, size=rng.integers(1, 6)))
        notes = " ".join(rng.choice(words, size=rng.integers(30, 90)))
        pa, ia, vv = rng.uniform(0, 20), rng.uniform(18, 85), rng.uniform(2e3, 8e4)
        pc = int(rng.poisson(0.6))
        sev = np.log1p(vv) * 0.1 + 0.3 * pc + 0.01 * len(notes) + rng.normal(0, 0.2)
        rows.append((i, region, pa, ia, vv, pc, notes, codes, float(sev)))
    cur.executemany("INSERT INTO claims VALUES (?,?,?,?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()


def featurize(row):
    region, policy_age, insured_age, vehicle_value, prior, notes, codes, sev = row
    feats = [0.0] * N_FEATURES
    feats[REGIONS.index(region)] = 1.0
    feats[8] = policy_age / 20.0
    feats[9] = (insured_age - 50.0) / 20.0
    feats[10] = np.log1p(vehicle_value) / 11.0
    feats[11] = prior / 3.0
    for code in codes.split(","):
        feats[12 + CODES.index(code)] += 1.0
    tokens = notes.split()
    feats[52] = len(tokens) / 60.0
    padded = f" {notes} "
    for i in range(len(padded) - 2):
        h = (ord(padded[i]) * 961 + ord(padded[i + 1]) * 31 + ord(padded[i + 2])) % 43
        feats[53 + h] += 0.02
    return feats, sev


class ClaimsDataset(keras.utils.PyDataset):
    def __init__(self, db_path, ids, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.conn = sqlite3.connect(db_path, check_same_thread=False)
        self.ids = ids
        self.batch_size = batch_size

    def __len__(self):
        return len(self.ids) // self.batch_size

    def __getitem__(self, idx):
        batch_ids = self.ids[idx * self.batch_size : (idx + 1) * self.batch_size]
        xs, ys = [], []
        for claim_id in batch_ids:
            row = self.conn.execute(
                "SELECT region, policy_age, insured_age, vehicle_value, prior_claims, notes,"
                " codes, severity FROM claims WHERE id = ?",
                (int(claim_id),),
            ).fetchone()
            f, y = featurize(row)
            xs.append(f)
            ys.append(y)
        return np.asarray(xs, dtype="float32"), np.asarray(ys, dtype="float32")


def build_model():
    inputs = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(768, activation="relu")(inputs)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u20_input_pydataset_sqlite_claims_")
    try:
        rng = np.random.default_rng(7)
        db_path = os.path.join(workdir, "claims.db")
        build_database(db_path, rng)
        ids = rng.permutation(N_CLAIMS)[: BATCH_SIZE * STEPS_PER_EPOCH]
        train_data = ClaimsDataset(db_path, ids, BATCH_SIZE)
        print(f"claims db ready, {len(train_data)} batches per epoch")

        model = build_model()
        timer = StepTimer()
        model.fit(train_data, epochs=EPOCHS, callbacks=[timer], verbose=2)
        full = timer.seconds_per_step()
        write_out({"steps_per_second": 1.0 / full})
        summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

        if args.truth:
            xb, yb = train_data[0]
            cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(
                cached,
                epochs=EPOCHS,
                steps_per_epoch=STEPS_PER_EPOCH,
                callbacks=[timer2],
                verbose=2,
            )
            compute = timer2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_out({"truth_input_fraction": frac})
            summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
