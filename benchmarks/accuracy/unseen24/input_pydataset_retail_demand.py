"""Next-day demand forecasting for store/item sales.

Feature engineering (rolling means, lags, store and price joins) is done in
pandas inside a keras.utils.PyDataset for every batch; an MLP regresses the
next day's units sold.
"""

import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

N_STORES = 40
N_ITEMS = 250
N_DAYS = 120
BATCH_SIZE = 512
HISTORY = 28
EPOCHS = 3
STEPS_PER_EPOCH = 40
VAL_STEPS = 10
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(21)

# ---------------------------------------------------------------- data
dates = pd.date_range("2024-01-01", periods=N_DAYS, freq="D")
store_ids = np.repeat(np.arange(N_STORES), N_ITEMS)
item_ids = np.tile(np.arange(N_ITEMS), N_STORES)
base = rng.gamma(2.0, 3.0, size=N_STORES * N_ITEMS)
sales = pd.DataFrame(
    {
        "store_id": np.repeat(store_ids, N_DAYS),
        "item_id": np.repeat(item_ids, N_DAYS),
        "date": np.tile(dates, N_STORES * N_ITEMS),
        "promo": rng.random(N_STORES * N_ITEMS * N_DAYS) < 0.1,
    }
)
weekly = 1.0 + 0.3 * np.sin(2 * np.pi * sales["date"].dt.day_of_week / 7)
sales["units"] = rng.poisson(np.repeat(base, N_DAYS) * weekly * (1 + sales["promo"]))
sales = sales.sort_values(["store_id", "item_id", "date"]).reset_index(drop=True)

stores = pd.DataFrame(
    {
        "store_id": np.arange(N_STORES),
        "store_size": rng.uniform(0.5, 3.0, N_STORES),
        "region": rng.integers(0, 5, N_STORES),
    }
)
prices = pd.DataFrame(
    {
        "item_id": np.arange(N_ITEMS),
        "price": rng.uniform(0.5, 30.0, N_ITEMS),
        "category": rng.integers(0, 12, N_ITEMS),
    }
)
N_SERIES = N_STORES * N_ITEMS


def build_features(frame):
    frame = frame.merge(stores, on="store_id", how="left").merge(prices, on="item_id", how="left")
    g = frame.groupby(["store_id", "item_id"], sort=False)["units"]
    for w in (7, 14, 28):
        frame[f"roll_mean_{w}"] = g.transform(lambda s: s.shift(1).rolling(w, min_periods=1).mean())
    frame["roll_std_7"] = g.transform(lambda s: s.shift(1).rolling(7, min_periods=2).std())
    for lag in (1, 2, 7, 14):
        frame[f"lag_{lag}"] = g.shift(lag)
    frame["target"] = g.shift(-1)
    cat_mean = frame.groupby(["store_id", "category", "date"])["units"].mean().rename("cat_mean")
    frame = frame.merge(cat_mean.reset_index(), on=["store_id", "category", "date"], how="left")
    frame["dow"] = frame["date"].dt.day_of_week
    frame = pd.get_dummies(frame, columns=["dow", "region"], dtype=np.float32)
    frame["promo"] = frame["promo"].astype(np.float32)
    frame["revenue_7"] = frame["roll_mean_7"] * frame["price"]
    return frame.dropna(subset=["target"]).fillna(0.0)


class DemandBatches(keras.utils.PyDataset):
    def __init__(self, series_ids, steps, seed, **kwargs):
        super().__init__(**kwargs)
        self.series_ids = series_ids
        self.steps = steps
        self.seed = seed

    def __len__(self):
        return self.steps

    def __getitem__(self, idx):
        gen = np.random.default_rng(self.seed * 100003 + idx)
        chosen = gen.choice(self.series_ids, size=BATCH_SIZE // 8, replace=False)
        end_day = int(gen.integers(HISTORY + 2, N_DAYS - 1))
        rows = (
            chosen[:, None] * N_DAYS + np.arange(end_day - HISTORY - 8, end_day)[None, :]
        ).ravel()
        feats = build_features(sales.iloc[np.sort(rows)])
        feats = feats.groupby(["store_id", "item_id"], sort=False).tail(8)
        x = feats.reindex(columns=FEATURES, fill_value=0.0).to_numpy(np.float32)
        y = np.log1p(feats["target"].to_numpy(np.float32))
        return x[:BATCH_SIZE], y[:BATCH_SIZE]


FEATURES = [
    c
    for c in build_features(sales.iloc[: 2 * N_DAYS]).columns
    if c not in ("store_id", "item_id", "date", "target", "units")
]
all_series = rng.permutation(N_SERIES)
train_series, val_series = all_series[:-1000], all_series[-1000:]


# ---------------------------------------------------------------- model
def build_model(n_features):
    inputs = keras.Input(shape=(n_features,))
    x = keras.layers.Normalization()(inputs)
    for width in (1024, 1024, 512, 256):
        x = keras.layers.Dense(width, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(LR), loss="mse", metrics=["mae"])
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        d = np.concatenate([np.diff(e) for e in self.epochs if len(e) > 1])
        return float(np.mean(d[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(train_data, val_data, **fit_kwargs):
    model = build_model(len(FEATURES))
    clock = StepClock()
    model.fit(
        train_data,
        validation_data=val_data,
        epochs=EPOCHS,
        callbacks=[clock],
        verbose=2,
        **fit_kwargs,
    )
    return clock.seconds_per_step()


train_ds = DemandBatches(
    train_series, STEPS_PER_EPOCH, seed=1, workers=2, use_multiprocessing=False
)
val_ds = DemandBatches(val_series, VAL_STEPS, seed=2, workers=2, use_multiprocessing=False)
full = train(train_ds, val_ds)
write_out({"steps_per_second": 1.0 / full})
summary = f"retail demand: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = train_ds[0]
    cached = tf.data.Dataset.from_tensors(batch).repeat()
    compute = train(cached, val_ds, steps_per_epoch=STEPS_PER_EPOCH)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
