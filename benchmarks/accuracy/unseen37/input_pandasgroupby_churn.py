"""Subscriber churn from raw card transactions, features aggregated per batch.

A pandas DataFrame of raw transactions (customer, amount, merchant category,
channel, day) is kept in memory.  Each training step samples a batch of
customers, selects their rows and builds the features on the fly with pandas
groupby aggregations and a pivot of category spend; the numpy result feeds a
custom tf.function training step.
"""
import argparse, json, os, shutil, tempfile, time
import numpy as np
import pandas as pd
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import keras

BATCH = 256
STEPS = 200
N_CUSTOMERS = 20000
TX_PER_CUSTOMER = 30
N_CATS = 24
N_FEAT = 16 + 2 + N_CATS + 4


def make_transactions(seed=0):
    rng = np.random.default_rng(seed)
    risk = rng.random(N_CUSTOMERS)
    n = N_CUSTOMERS * TX_PER_CUSTOMER
    cust = np.repeat(np.arange(N_CUSTOMERS), TX_PER_CUSTOMER)
    df = pd.DataFrame({
        "customer": cust,
        "amount": rng.gamma(2.0, 20.0, n) * (1.5 - risk[cust]),
        "category": rng.integers(0, N_CATS, n),
        "channel": rng.choice(["web", "app", "pos", "phone"], n),
        "day": (rng.integers(0, 90, n) * (1 - 0.5 * risk[cust])).astype(int),
        "refund": rng.random(n) < 0.03 + 0.1 * risk[cust],
    })
    labels = (risk + 0.2 * rng.random(N_CUSTOMERS) > 0.75).astype(np.float32)
    df.index = pd.Index(cust, name="cid")
    return df, labels


def batch_features(df, customers):
    rows = df.loc[customers]
    g = rows.groupby("customer")
    agg = g.agg(amt_sum=("amount", "sum"), amt_mean=("amount", "mean"), amt_std=("amount", "std"),
                amt_max=("amount", "max"), day_min=("day", "min"), day_max=("day", "max"),
                day_mean=("day", "mean"), day_nuniq=("day", "nunique"), n_tx=("amount", "size"),
                refunds=("refund", "sum"), n_cat=("category", "nunique"), amt_med=("amount", "median"),
                channel_nuniq=("channel", "nunique"), amt_min=("amount", "min"),
                cat_first=("category", "first"), day_std=("day", "std"))
    agg["recency"] = 90 - agg["day_max"]
    agg["span"] = agg["day_max"] - agg["day_min"]
    cat = rows.pivot_table(index="customer", columns="category", values="amount", aggfunc="sum",
                           fill_value=0.0).reindex(columns=range(N_CATS), fill_value=0.0)
    cat = cat.div(cat.sum(axis=1) + 1e-6, axis=0)
    chan = pd.crosstab(rows["customer"], rows["channel"]).reindex(
        columns=["web", "app", "pos", "phone"], fill_value=0)
    feats = pd.concat([agg, cat, chan], axis=1).reindex(customers).fillna(0.0)
    x = feats.to_numpy(np.float32)[:, :N_FEAT]
    return np.log1p(np.abs(x)) * np.sign(x)


def batches(df, labels, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        customers = rng.choice(N_CUSTOMERS, BATCH, replace=False)
        yield batch_features(df, customers), labels[customers]


def build_model():
    return keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(1280, activation="relu"),
        keras.layers.Dense(1280, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(next_batch):
    keras.utils.set_random_seed(1)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = bce(y[:, None], model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, losses = [], []
    for step in range(STEPS):
        x, y = next_batch()
        losses.append(float(train_step(x, y)))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), float(np.mean(losses[-30:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u37_input_pandasgroupby_churn_")
    try:
        t0 = time.perf_counter()
        df, labels = make_transactions()
        it = batches(df, labels)
        full, loss = train(lambda: next(it))
        emit("steps_per_second", 1.0 / full)
        msg = "input_pandasgroupby_churn: %.1f ms/step, loss %.3f" % (full * 1e3, loss)
        if args.truth:
            batch = next(batches(df, labels, seed=1))
            compute, _ = train(lambda: batch)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit("truth_input_fraction", frac)
            msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (compute * 1e3, frac)
        print(msg + ", wall %.1f s" % (time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
