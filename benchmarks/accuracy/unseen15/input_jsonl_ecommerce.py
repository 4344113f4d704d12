"""Click-through prediction for product search results, from JSON-lines event logs.

Usage: python input_jsonl_ecommerce.py [--truth]
"""

import argparse
import json
import os
import shutil
import tempfile
import time
import zlib

import numpy as np

import keras
import tensorflow as tf
from keras import layers

N_EVENTS = 24000
N_VAL = 2048
VOCAB = 20000
QUERY_LEN = 16
TRIGRAM_BUCKETS = 50000
TEXT_TRIGRAMS = 192
N_NUMERIC = 96
CATEGORIES = [
    "electronics",
    "home",
    "garden",
    "toys",
    "fashion",
    "beauty",
    "sports",
    "books",
    "auto",
    "grocery",
]
BATCH_SIZE = 256
EPOCHS = 3
STEPS_PER_EPOCH = 30
SEED = 17


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def write_log(path, rng):
    words = [f"w{i}" for i in range(3000)]
    with open(path, "w") as f:
        for i in range(N_EVENTS):
            cat = CATEGORIES[rng.integers(len(CATEGORIES))]
            event = {
                "event_id": f"evt-{i:08d}",
                "session": {
                    "user_id": int(rng.integers(1e6)),
                    "device": rng.choice(["ios", "android", "web"]).item(),
                },
                "query": " ".join(rng.choice(words, size=rng.integers(2, 9))),
                "product": {
                    "category": cat,
                    "title": " ".join(rng.choice(words, size=rng.integers(8, 20))).title(),
                    "price": round(float(rng.lognormal(3, 1)), 2),
                    "rating": round(float(rng.uniform(1, 5)), 1),
                    "features": [round(float(v), 4) for v in rng.normal(size=N_NUMERIC)],
                },
                "position": int(rng.integers(1, 41)),
                "clicked": int(rng.random() < 0.15 + 0.1 * (cat == "toys")),
            }
            f.write(json.dumps(event) + "\n")


def encode(event):
    tokens = [zlib.crc32(w.encode()) % (VOCAB - 1) + 1 for w in event["query"].lower().split()][
        :QUERY_LEN
    ]
    tokens += [0] * (QUERY_LEN - len(tokens))
    prod = event["product"]
    text = " " + event["query"].lower() + " | " + prod["title"].lower() + " "
    grams = [
        zlib.crc32(text[i : i + 3].encode()) % (TRIGRAM_BUCKETS - 1) + 1
        for i in range(len(text) - 2)
    ]
    grams = grams[:TEXT_TRIGRAMS] + [0] * max(0, TEXT_TRIGRAMS - len(grams))
    numeric = prod["features"] + [
        np.log1p(prod["price"]),
        prod["rating"] / 5.0,
        1.0 / event["position"],
        float(event["session"]["device"] == "web"),
    ]
    return tokens, grams, CATEGORIES.index(prod["category"]), numeric, event["clicked"]


def log_generator(path, batch_size):
    while True:
        with open(path) as f:
            buf = []
            for line in f:
                buf.append(encode(json.loads(line)))
                if len(buf) == batch_size:
                    tokens, grams, cats, numeric, y = zip(*buf)
                    yield (
                        {
                            "query_tokens": np.array(tokens, dtype=np.int32),
                            "text_trigrams": np.array(grams, dtype=np.int32),
                            "category": np.array(cats, dtype=np.int32),
                            "numeric": np.array(numeric, dtype=np.float32),
                        },
                        np.array(y, dtype=np.float32),
                    )
                    buf = []


def build_model():
    q = keras.Input(shape=(QUERY_LEN,), dtype="int32", name="query_tokens")
    t = keras.Input(shape=(TEXT_TRIGRAMS,), dtype="int32", name="text_trigrams")
    c = keras.Input(shape=(), dtype="int32", name="category")
    n = keras.Input(shape=(N_NUMERIC + 4,), name="numeric")
    qe = layers.Embedding(VOCAB, 64, mask_zero=True)(q)
    qe = layers.GlobalAveragePooling1D()(qe)
    te = layers.GlobalAveragePooling1D()(layers.Embedding(TRIGRAM_BUCKETS, 32, mask_zero=True)(t))
    ce = layers.Flatten()(layers.Embedding(len(CATEGORIES), 8)(layers.Reshape((1,))(c)))
    ne = layers.Dense(64, activation="relu")(layers.BatchNormalization()(n))
    x = layers.Concatenate()([qe, te, ce, ne])
    x = layers.Dense(128, activation="relu")(x)
    x = layers.Dense(64, activation="relu")(x)
    out = layers.Dense(1, activation="sigmoid", name="click")(x)
    model = keras.Model(
        {"query_tokens": q, "text_trigrams": t, "category": c, "numeric": n}, out, name="ctr_ranker"
    )
    model.compile(
        optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC(name="auc")]
    )
    return model


def train(data, val_data):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(
        data,
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        validation_data=val_data,
        callbacks=[clock],
        verbose=2,
    )
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    workdir = tempfile.mkdtemp(prefix="u15_input_jsonl_ecommerce_")
    try:
        path = os.path.join(workdir, "search_events.jsonl")
        t0 = time.perf_counter()
        write_log(path, rng)
        print(
            f"event log {os.path.getsize(path) / 1e6:.1f} MB written in {time.perf_counter() - t0:.1f}s"
        )

        val_gen = log_generator(path, N_VAL)
        val_data = next(val_gen)

        full = train(log_generator(path, BATCH_SIZE), val_data)
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            batch = next(log_generator(path, BATCH_SIZE))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat(), val_data)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
