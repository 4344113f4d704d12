"""Flagging health-insurance claims for manual audit.

Claims live in a SQLite database (written to a temp dir at start-up). A
Python generator issues one SQL query per batch (join with the provider
table plus a per-member history aggregate) and converts the rows to
arrays for model.fit.
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

N_CLAIMS = 60000
N_MEMBERS = 3000
N_PROVIDERS = 400
N_NUM = 12
BATCH = 256
STEPS = 400
EPOCHS = 2

QUERY = f"""
SELECT c.amount, c.n_lines, c.age, c.los, {", ".join(f"c.f{k}" for k in range(N_NUM))},
       p.risk, p.volume,
       (SELECT AVG(h.amount) FROM claims h WHERE h.member_id = c.member_id AND h.id < c.id) AS hist_avg,
       (SELECT COUNT(*) FROM claims h WHERE h.member_id = c.member_id AND h.id < c.id) AS hist_n,
       (SELECT MAX(h.amount) FROM claims h WHERE h.provider_id = c.provider_id
                                                 AND h.id BETWEEN c.id - 20000 AND c.id - 1) AS prov_max,
       c.flagged
FROM claims c JOIN providers p ON p.id = c.provider_id
WHERE c.id >= ? AND c.id < ?
ORDER BY c.id
"""


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def build_db(path, rng):
    con = sqlite3.connect(path)
    num_cols = ", ".join(f"f{k} REAL" for k in range(N_NUM))
    con.execute("CREATE TABLE providers (id INTEGER PRIMARY KEY, risk REAL, volume REAL)")
    con.execute(f"CREATE TABLE claims (id INTEGER PRIMARY KEY, member_id INTEGER, provider_id INTEGER,"
                f" amount REAL, n_lines INTEGER, age REAL, los REAL, {num_cols}, flagged INTEGER)")
    prov = [(i, float(rng.beta(2, 8)), float(rng.gamma(2, 100))) for i in range(N_PROVIDERS)]
    con.executemany("INSERT INTO providers VALUES (?, ?, ?)", prov)
    member = rng.integers(0, N_MEMBERS, N_CLAIMS)
    provider = rng.integers(0, N_PROVIDERS, N_CLAIMS)
    amount = rng.lognormal(6, 1, N_CLAIMS)
    feats = rng.normal(size=(N_CLAIMS, N_NUM))
    risk = np.array([p[1] for p in prov])[provider]
    logit = 2.0 * risk + 0.4 * np.log(amount) - 3.5 + feats[:, 0]
    flagged = (rng.random(N_CLAIMS) < 1 / (1 + np.exp(-logit))).astype(int)
    rows = []
    for i in range(N_CLAIMS):
        rows.append((i, int(member[i]), int(provider[i]), float(amount[i]), int(rng.integers(1, 20)),
                     float(rng.integers(18, 90)), float(rng.integers(0, 14)),
                     *map(float, feats[i]), int(flagged[i])))
    con.executemany(f"INSERT INTO claims VALUES ({', '.join('?' * (N_NUM + 8))})", rows)
    con.execute("CREATE INDEX idx_member ON claims(member_id)")
    con.execute("CREATE INDEX idx_provider ON claims(provider_id)")
    con.commit()
    con.close()


def rows_to_batch(rows):
    arr = np.array([[0.0 if v is None else v for v in r] for r in rows], dtype=np.float64)
    y = arr[:, -1].astype(np.int32)
    x = arr[:, :-1]
    x[:, 0] = np.log1p(x[:, 0])
    x[:, -3:] = np.log1p(x[:, -3:])
    return x.astype(np.float32), y


def claim_batches(db_path):
    con = sqlite3.connect(db_path, check_same_thread=False)  # keras pulls from a worker thread
    n_batches = N_CLAIMS // BATCH
    try:
        while True:
            for b in np.random.default_rng(1).permutation(n_batches):
                start = int(b) * BATCH
                rows = con.execute(QUERY, (start, start + BATCH)).fetchall()
                yield rows_to_batch(rows)
    finally:
        con.close()


def make_model(n_in):
    inputs = keras.Input((n_in,))
    h = keras.layers.Normalization()(inputs)
    h = keras.layers.Dense(384, activation="relu")(h)
    h = keras.layers.Dense(384, activation="relu")(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(1)(h))
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.AUC(from_logits=True)])
    return model


def train(data, n_in, clock):
    keras.utils.set_random_seed(2)
    model = make_model(n_in)
    t0 = time.perf_counter()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return hist, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u33_input_sqlite_claimsaudit_")
    try:
        db_path = os.path.join(tmp, "claims.db")
        build_db(db_path, np.random.default_rng(0))
        gen = claim_batches(db_path)
        first = next(gen)
        n_in = first[0].shape[1]
        clock = StepClock()
        hist, wall = train(gen, n_in, clock)
        gen.close()
        full = clock.seconds_per_step()
        report(steps_per_second=1.0 / full)
        msg = f"claimsaudit: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {hist.history['loss'][-1]:.3f}"
        if args.truth:
            clock2 = StepClock()
            train(tf.data.Dataset.from_tensors(first).repeat(), n_in, clock2)
            compute = clock2.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report(truth_input_fraction=frac)
            msg += f", truth_input_fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
