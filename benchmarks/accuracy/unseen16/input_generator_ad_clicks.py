"""Click-through-rate model for display ads with hashed categorical features."""

import argparse
import hashlib
import json
import os
import time

import numpy as np
import keras
import tensorflow as tf

BATCH_SIZE = 256
TRAIN_STEPS = 90
VAL_STEPS = 10
N_CAT = 26
N_DENSE = 13
UA_TOKENS = 12
HASH_BUCKETS = 2**17
EMBED_DIM = 32

SITES = [f"site_{i:04d}" for i in range(900)]
APPS = [f"app.{w}.mobile" for w in ("news", "games", "shop", "video", "social", "maps")]
BROWSERS = ["Mozilla/5.0", "AppleWebKit/537.36", "Chrome/121.0", "Safari/605.1", "Edge/120"]


def hash_feature(name, value):
    digest = hashlib.md5(f"{name}={value}".encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % HASH_BUCKETS


def impression_stream(n_rows, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n_rows):
        raw = {
            "site": SITES[rng.integers(len(SITES))],
            "app": APPS[rng.integers(len(APPS))],
            "hour": f"{rng.integers(24):02d}",
            "device_model": f"dm_{rng.integers(5000)}",
            "geo": f"{rng.integers(200)}-{rng.integers(50)}",
        }
        for j in range(N_CAT - len(raw)):
            raw[f"c{j}"] = f"v{rng.zipf(1.3) % 100000}"
        cat_ids = [hash_feature(k, v) for k, v in sorted(raw.items())]
        user_agent = " ".join(
            f"{BROWSERS[rng.integers(len(BROWSERS))]} ({rng.integers(1000)};{rng.integers(64)})"
            for _ in range(3)
        )
        tokens = user_agent.lower().replace("(", " ").replace(")", " ").replace(";", " ").split()
        ua_ids = [hash_feature("ua", t) for t in tokens][:UA_TOKENS]
        ua_ids += [0] * (UA_TOKENS - len(ua_ids))
        dense = np.log1p(rng.exponential(3.0, N_DENSE)).astype(np.float32)
        logit = -2.0 + 0.8 * dense[0] - 0.5 * dense[3] + (0.7 if raw["hour"] < "08" else 0.0)
        label = np.float32(rng.random() < 1.0 / (1.0 + np.exp(-logit)))
        yield (
            {
                "cat_ids": np.asarray(cat_ids, np.int32),
                "ua_ids": np.asarray(ua_ids, np.int32),
                "counters": dense,
            },
            label,
        )


SIGNATURE = (
    {
        "cat_ids": tf.TensorSpec(shape=(N_CAT,), dtype=tf.int32),
        "ua_ids": tf.TensorSpec(shape=(UA_TOKENS,), dtype=tf.int32),
        "counters": tf.TensorSpec(shape=(N_DENSE,), dtype=tf.float32),
    },
    tf.TensorSpec(shape=(), dtype=tf.float32),
)


def make_dataset(n_rows, seed):
    ds = tf.data.Dataset.from_generator(
        lambda: impression_stream(n_rows, seed), output_signature=SIGNATURE
    )
    return ds.batch(BATCH_SIZE)


def build_model():
    cat_in = keras.Input(shape=(N_CAT,), dtype="int32", name="cat_ids")
    ua_in = keras.Input(shape=(UA_TOKENS,), dtype="int32", name="ua_ids")
    dense_in = keras.Input(shape=(N_DENSE,), name="counters")
    emb = keras.layers.Embedding(HASH_BUCKETS, EMBED_DIM)
    cat = keras.layers.Flatten()(emb(cat_in))
    ua = keras.layers.GlobalAveragePooling1D()(emb(ua_in))
    d = keras.layers.BatchNormalization()(dense_in)
    x = keras.layers.Concatenate()([cat, ua, d])
    for units in (1536, 768, 256):
        x = keras.layers.Dense(units, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model({"cat_ids": cat_in, "ua_ids": ua_in, "counters": dense_in}, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(name="auc")],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        durations = [b - a for (e0, a), (e1, b) in zip(self.stamps, self.stamps[1:]) if e0 == e1]
        return float(np.mean(durations[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    train_ds = make_dataset(TRAIN_STEPS * BATCH_SIZE, seed=1)
    val_ds = make_dataset(VAL_STEPS * BATCH_SIZE, seed=2)
    model = build_model()
    timer = StepTimer()
    t0 = time.perf_counter()
    hist = model.fit(train_ds, validation_data=val_ds, epochs=1, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    print(
        f"fit done in {time.perf_counter() - t0:.1f}s  val_auc={hist.history['val_auc'][-1]:.3f}"
        f"  {full * 1000:.1f} ms/step"
    )
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(make_dataset(BATCH_SIZE, seed=3)))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(cached, epochs=1, steps_per_epoch=TRAIN_STEPS, callbacks=[timer2], verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
