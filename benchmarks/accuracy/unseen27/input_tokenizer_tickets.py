"""Support-ticket routing: tokenise free text in Python, classify into queues."""

import argparse
import json
import os
import re
import unicodedata
import time

import numpy as np
import tensorflow as tf
import keras

MAX_LEN = 256
VOCAB_SIZE = 20000
N_QUEUES = 12
BATCH_SIZE = 64
STEPS = 200
STEPS_PER_EXECUTION = 8

SUFFIX_RE = re.compile(r"(ing|edly|ed|ies|es|s|ly|ment|ness)$")
TOKEN_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|[^\sa-z\d]")
PRODUCTS = ["router", "invoice", "laptop", "vpn", "printer", "account", "password", "license",
            "shipment", "refund", "dashboard", "api", "mobile app", "sso", "backup"]
VERBS = ["cannot", "won't", "keeps failing to", "stopped trying to", "is unable to", "refuses to"]
ACTIONS = ["connect", "sync", "load", "print", "log in", "update", "export", "reset", "charge"]
FILLER = ("hi team please help asap this started yesterday after the update and my manager "
          "needs it fixed before the quarterly review thanks in advance regards").split()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def build_vocab(rng):
    words = set(FILLER) | set(" ".join(PRODUCTS + VERBS + ACTIONS).replace("'", " ").split())
    syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "po", "de", "xa", "qu"]
    while len(words) < VOCAB_SIZE - 2:
        words.add("".join(rng.choice(syllables, rng.integers(2, 5))))
    vocab = {w: i + 2 for i, w in enumerate(sorted(words))}
    return vocab, np.asarray(sorted(words))


def synth_ticket(rng, words):
    queue = int(rng.integers(N_QUEUES))
    product = PRODUCTS[queue % len(PRODUCTS)]
    body = list(rng.choice(FILLER, int(rng.integers(160, 300))))
    body += list(rng.choice(words, int(rng.integers(20, 60))))
    rng.shuffle(body)
    text = (f"Ticket #{rng.integers(10000, 99999)}: My {product} {rng.choice(VERBS)} "
            f"{rng.choice(ACTIONS)}!! " + " ".join(body) + f". Order ID {rng.integers(1e6)}.")
    return text, queue


def stem(token):
    if len(token) <= 4:
        return token
    return SUFFIX_RE.sub("", token)


def tokenize(text, vocab):
    text = unicodedata.normalize("NFKD", text.lower().replace("\u2019", "'"))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    tokens = TOKEN_RE.findall(text)
    ids = []
    for tok in tokens:
        if tok.isdigit():
            tok = "<num>" if len(tok) > 2 else tok
        idx = vocab.get(tok)
        if idx is None:
            idx = vocab.get(stem(tok), 1)
        ids.append(idx)
    ids = ids[:MAX_LEN]
    return ids + [0] * (MAX_LEN - len(ids))


def ticket_stream(vocab, words, seed):
    rng = np.random.default_rng(seed)
    while True:
        text, queue = synth_ticket(rng, words)
        yield np.asarray(tokenize(text, vocab), dtype=np.int32), queue


def build_model():
    inputs = keras.Input(shape=(MAX_LEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB_SIZE, 64)(inputs)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_QUEUES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    return model


def train(dataset):
    model = build_model()
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=0)
    # one callback call per execution of STEPS_PER_EXECUTION steps
    return float(np.mean(np.diff(clock.times)[5:])) / STEPS_PER_EXECUTION


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    vocab, words = build_vocab(np.random.default_rng(0))
    ds = tf.data.Dataset.from_generator(
        lambda: ticket_stream(vocab, words, seed=1),
        output_signature=(
            tf.TensorSpec(shape=(MAX_LEN,), dtype=tf.int32),
            tf.TensorSpec(shape=(), dtype=tf.int64),
        ),
    ).batch(BATCH_SIZE)

    full = train(ds)
    append_result(steps_per_second=1.0 / full)
    msg = f"tickets: {1.0 / full:.2f} steps/s over {STEPS} steps of {BATCH_SIZE}"

    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
