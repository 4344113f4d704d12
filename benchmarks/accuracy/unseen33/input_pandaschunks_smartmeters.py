"""Next-day peak-load band forecasting for residential smart meters.

Half-hourly meter readings are exported to a CSV in a temp dir; training
reads it back with pandas.read_csv(chunksize=BATCH) and each chunk gets
per-row feature engineering (timestamp parsing, tariff one-hot, a row-wise
apply) inside a Python generator feeding model.fit.
"""
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

N_ROWS = 40000
N_SLOTS = 48
BATCH = 256
STEPS = 120
EPOCHS = 2
TARIFFS = ["flat", "economy7", "agile", "go", "tracker"]


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


def write_csv(path, rng):
    base = pd.Timestamp("2025-01-01")
    days = rng.integers(0, 365, N_ROWS)
    profile = np.sin(np.linspace(0, 2 * np.pi, N_SLOTS))[None, :] + 1.2
    loads = rng.gamma(2.0, 0.3, (N_ROWS, N_SLOTS)) * profile * (1 + 0.3 * np.cos(days / 58.0))[:, None]
    df = pd.DataFrame(loads.round(4), columns=[f"kwh_{k:02d}" for k in range(N_SLOTS)])
    df.insert(0, "meter_id", rng.integers(100000, 999999, N_ROWS))
    df.insert(1, "read_at", (base + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d %H:%M:%S"))
    df.insert(2, "tariff", rng.choice(TARIFFS, N_ROWS))
    peak = loads.max(axis=1) * (1.1 + 0.2 * np.sin(days / 30.0))
    df["next_peak_band"] = np.digitize(peak, np.quantile(peak, [0.25, 0.5, 0.75]))
    df.to_csv(path, index=False)


def slot_stats(row):
    vals = row.values.astype(float)
    evening = vals[34:42].sum()
    night = vals[0:12].sum()
    return pd.Series({"evening_share": evening / (vals.sum() + 1e-6),
                      "night_share": night / (vals.sum() + 1e-6),
                      "ramp": float(np.max(np.diff(vals)))})


def chunk_to_batch(chunk):
    ts = pd.to_datetime(chunk["read_at"], format="%Y-%m-%d %H:%M:%S")
    kwh = chunk[[f"kwh_{k:02d}" for k in range(N_SLOTS)]]
    stats = kwh.apply(slot_stats, axis=1)
    tariff = pd.get_dummies(pd.Categorical(chunk["tariff"], categories=TARIFFS), dtype=np.float32)
    cal = pd.DataFrame({"dow_sin": np.sin(2 * np.pi * ts.dt.dayofweek / 7),
                        "doy_cos": np.cos(2 * np.pi * ts.dt.dayofyear / 365)})
    feats = np.concatenate([kwh.to_numpy(np.float32), stats.to_numpy(np.float32),
                            tariff.to_numpy(np.float32), cal.to_numpy(np.float32)], axis=1)
    return feats, chunk["next_peak_band"].to_numpy(np.int32)


def csv_batches(path):
    while True:
        for chunk in pd.read_csv(path, chunksize=BATCH):
            if len(chunk) == BATCH:
                yield chunk_to_batch(chunk)


def make_model(n_in):
    inputs = keras.Input((n_in,))
    h = keras.layers.Dense(1024, activation="relu")(inputs)
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(512, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(4)(h))
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(data, n_in, clock):
    keras.utils.set_random_seed(4)
    model = make_model(n_in)
    t0 = time.perf_counter()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return hist, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u33_input_pandaschunks_smartmeters_")
    try:
        path = os.path.join(tmp, "meters.csv")
        write_csv(path, np.random.default_rng(0))
        gen = csv_batches(path)
        first = next(gen)
        n_in = first[0].shape[1]
        clock = StepClock()
        hist, wall = train(gen, n_in, clock)
        gen.close()
        full = clock.seconds_per_step()
        report(steps_per_second=1.0 / full)
        msg = f"smartmeters: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, acc {hist.history['accuracy'][-1]:.3f}"
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
