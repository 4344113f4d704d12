"""Motor-insurance claim severity model trained from raw string columns.

The policy table arrives as strings (as exported from the policy admin
system).  Every row is encoded inside a serial tf.data map with Keras
preprocessing layers: StringLookup one-hot for the categorical columns,
Hashing for the high-cardinality postcode, string->float + Normalization
for the numeric columns.
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

BATCH = 128
STEPS_PER_EPOCH = 250
EPOCHS = 2
N_ROWS = BATCH * STEPS_PER_EPOCH
HIDDEN = 384

CAT_COLS = ["region", "vehicle_make", "policy_type", "occupation", "garage", "fuel"]
NUM_COLS = ["driver_age", "vehicle_value", "annual_mileage", "prior_claims", "years_licensed", "engine_cc"]


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self):
        gaps = [g for ts in self.epochs for g in np.diff(ts)]
        return float(np.mean(gaps[4:]))  # steps 5 onward


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_policies(n, rng):
    vocab = {
        "region": [f"R{i:02d}" for i in range(48)],
        "vehicle_make": ["ford", "vw", "toyota", "bmw", "audi", "kia", "fiat", "renault", "skoda", "tesla",
                         "volvo", "mazda", "honda", "seat", "peugeot", "opel", "nissan", "mini"],
        "policy_type": ["comprehensive", "third_party", "third_party_fire_theft"],
        "occupation": [f"occ_{i}" for i in range(120)],
        "garage": ["street", "driveway", "garage", "car_park"],
        "fuel": ["petrol", "diesel", "hybrid", "electric"],
    }
    cols = {c: rng.choice(v, n) for c, v in vocab.items()}
    cols["postcode"] = np.array([f"{a}{b:02d} {c}XY" for a, b, c in
                                 zip(rng.choice(list("ABCDEFGHKLMN"), n), rng.integers(0, 99, n), rng.integers(0, 9, n))])
    age = rng.normal(45, 13, n).clip(18, 90)
    value = rng.lognormal(9.6, 0.5, n)
    cols["driver_age"] = np.char.mod("%.0f", age)
    cols["vehicle_value"] = np.char.mod("%.2f", value)
    cols["annual_mileage"] = np.char.mod("%.0f", rng.gamma(4, 2500, n))
    cols["prior_claims"] = np.char.mod("%d", rng.poisson(0.4, n))
    cols["years_licensed"] = np.char.mod("%.0f", (age - 17) * rng.uniform(0.3, 1, n))
    cols["engine_cc"] = np.char.mod("%d", rng.choice([999, 1200, 1400, 1600, 2000, 2500, 3000], n))
    df = pd.DataFrame(cols)
    severity = np.log1p(value / 1e4) + 0.3 * (age < 25) + 0.2 * rng.standard_normal(n)
    return df, vocab, severity.astype("float32")


def build_encoder(df, vocab):
    lookups = {c: keras.layers.StringLookup(vocabulary=v, output_mode="one_hot") for c, v in vocab.items()}
    hasher = keras.layers.Hashing(num_bins=256, output_mode="one_hot")
    norm = keras.layers.Normalization()
    norm.adapt(df[NUM_COLS].astype("float32").to_numpy())

    def encode(row, label):
        parts = [lookups[c](row[c]) for c in CAT_COLS]
        parts.append(hasher(row["postcode"][None])[0])
        nums = tf.stack([tf.strings.to_number(row[c]) for c in NUM_COLS])
        parts.append(norm(nums[None, :])[0])
        return tf.concat([tf.reshape(tf.cast(p, tf.float32), [-1]) for p in parts], axis=0), label

    return encode


def build_model(width):
    keras.utils.set_random_seed(7)
    model = keras.Sequential([
        keras.Input((width,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def train(ds, width):
    model = build_model(width)
    clock = StepClock()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock], verbose=0)
    return clock.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    df, vocab, y = make_policies(N_ROWS, rng)
    encode = build_encoder(df, vocab)
    raw = tf.data.Dataset.from_tensor_slices(({c: df[c].to_numpy().astype(str) for c in df.columns}, y))
    ds = raw.shuffle(4096, seed=1).map(encode).batch(BATCH, drop_remainder=True).repeat()
    width = int(next(iter(ds))[0].shape[-1])

    t0 = time.perf_counter()
    full = train(ds, width)
    report(steps_per_second=1.0 / full)
    msg = f"insurance claims: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat(), width)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
