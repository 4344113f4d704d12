"""Two-tower-ish click model: user profile features + tokenised article headline."""

import argparse
import json
import os
import random
import re
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=80)
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--n-users", type=int, default=50000)
args = parser.parse_args()

USER_DIM = 96
SEQ_LEN = 48
VOCAB_SIZE = 20000
WORDS = [f"w{i}" for i in range(5000)] + [
    "election",
    "market",
    "storm",
    "league",
    "vaccine",
    "startup",
    "climate",
    "court",
]

rng_np = np.random.default_rng(5)
user_features = rng_np.normal(size=(args.n_users, USER_DIM)).astype(np.float32)
clicked = (user_features[:, 0] + 0.5 * user_features[:, 1] > 0).astype(np.float32)


def build_vocab():
    vocab = {"<pad>": 0, "<unk>": 1}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    return vocab


VOCAB = build_vocab()


def fake_headline(rng):
    n = rng.randint(12, 40)
    words = [rng.choice(WORDS) for _ in range(n)]
    text = " ".join(words).capitalize() + "! " + rng.choice(["Live", "Opinion", "Analysis"])
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(250, 450)))
    return text + f" | {rng.randint(1, 28)}/{rng.randint(1, 12)}/2024. " + body


def tokenize(text):
    text = text.lower()
    text = re.sub(r"[^a-z0-9 ]+", " ", text)
    tokens = [t for t in text.split() if t]
    ids = []
    for tok in tokens:
        ids.append(VOCAB.get(tok, 1))
        if tok.isdigit():
            ids.append(VOCAB.get("<unk>"))
    bigrams = [
        hash(a + b) % (VOCAB_SIZE - len(VOCAB)) + len(VOCAB) for a, b in zip(tokens, tokens[1:])
    ]
    counts = {}
    for t in ids + bigrams:
        counts[t] = counts.get(t, 0) + 1
    ids = sorted(set(ids[: SEQ_LEN // 2]), key=lambda t: -counts[t])
    ids = (ids + sorted(bigrams, key=lambda t: -counts[t]))[:SEQ_LEN]
    return ids + [0] * (SEQ_LEN - len(ids))


def headlines():
    rng = random.Random(9)
    while True:
        yield np.array(tokenize(fake_headline(rng)), np.int32)


def make_dataset(batch_size):
    users = tf.data.Dataset.from_tensor_slices((user_features, clicked)).repeat()
    articles = tf.data.Dataset.from_generator(
        headlines, output_signature=tf.TensorSpec((SEQ_LEN,), tf.int32)
    )
    ds = tf.data.Dataset.zip((users, articles))
    ds = ds.map(lambda u, a: ({"user": u[0], "headline": a}, u[1]))
    return ds.batch(batch_size, drop_remainder=True)


def build_model():
    user_in = keras.Input(shape=(USER_DIM,), name="user")
    head_in = keras.Input(shape=(SEQ_LEN,), dtype="int32", name="headline")
    u = keras.layers.Dense(512, activation="relu")(user_in)
    u = keras.layers.Dense(256, activation="relu")(u)
    h = keras.layers.Embedding(VOCAB_SIZE, 128)(head_in)
    h = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    x = keras.layers.Concatenate()([u, h])
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model([user_in, head_in], out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def seconds_per_step(stamps, skip=5):
    return float(np.mean(np.diff(stamps)[skip - 1 :]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds):
    model = build_model()
    clock = StepClock()
    model.fit(ds, steps_per_epoch=args.steps, epochs=1, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.stamps)


def main():
    ds = make_dataset(args.batch_size)
    full = train(ds)
    write_result({"steps_per_second": 1.0 / full})
    msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg)


if __name__ == "__main__":
    main()
