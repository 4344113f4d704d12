"""Click-through-rate model for display ads (wide & deep).

Impression logs are already in memory; the input pipeline is cached and
prefetched.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_IMPRESSIONS = 60_000
CATEGORICAL = {
    "advertiser": 5000,
    "campaign": 20000,
    "site": 8000,
    "device": 50,
    "country": 200,
    "hour": 24,
    "ad_size": 30,
    "os": 20,
}
N_NUMERIC = 16
CROSS_BUCKETS = 100_000
EMBED = 32
BATCH = 1024
EPOCHS = 3
LR = 1e-3


def make_logs(seed=0):
    rng = np.random.default_rng(seed)
    features = {}
    for name, card in CATEGORICAL.items():
        features[name] = rng.zipf(1.2, size=N_IMPRESSIONS).clip(1, card).astype(np.int32) - 1
    features["numeric"] = rng.normal(size=(N_IMPRESSIONS, N_NUMERIC)).astype(np.float32)
    cross = (
        features["advertiser"] * 7919 + features["site"] * 31 + features["hour"]
    ) % CROSS_BUCKETS
    features["cross"] = cross.astype(np.int32)
    logit = 0.5 * features["numeric"][:, 0] + 0.3 * (features["hour"] > 18) - 2.0
    clicks = (rng.random(N_IMPRESSIONS) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return features, clicks


def build_model():
    inputs = {name: keras.Input((), dtype="int32", name=name) for name in CATEGORICAL}
    inputs["cross"] = keras.Input((), dtype="int32", name="cross")
    inputs["numeric"] = keras.Input((N_NUMERIC,), name="numeric")

    wide = keras.layers.Embedding(CROSS_BUCKETS, 1)(inputs["cross"])

    embedded = [
        keras.layers.Embedding(card, EMBED, name=f"emb_{name}")(inputs[name])
        for name, card in CATEGORICAL.items()
    ]
    deep = keras.layers.Concatenate()(embedded + [inputs["numeric"]])
    for units in (1024, 512, 256):
        deep = keras.layers.Dense(units, activation="relu")(deep)
    deep = keras.layers.Dense(1)(deep)

    out = keras.layers.Add()([wide, deep])
    model = keras.Model(inputs, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.AUC(from_logits=True)],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        gaps = np.concatenate([np.diff(s) for s in self.stamps if len(s) > 1])
        return float(np.mean(gaps[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    features, clicks = make_logs()
    steps = N_IMPRESSIONS // BATCH
    train_ds = (
        tf.data.Dataset.from_tensor_slices((features, clicks))
        .batch(BATCH, drop_remainder=True)
        .cache()
        .prefetch(tf.data.AUTOTUNE)
    )

    model = build_model()
    timer = StepTimer()
    model.fit(train_ds, epochs=EPOCHS, callbacks=[timer], verbose=2)
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"ad clicks wide&deep: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

    if args.truth:
        batch = next(iter(train_ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2], verbose=2)
        compute = timer2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
