"""Routing customer-support tickets to the right queue from their free-text body."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_TICKETS = 3000
N_QUEUES = 7
VOCAB_SIZE = 6000
MAX_TOKENS = 256
BATCH_SIZE = 64
STEPS = 150

QUEUE_WORDS = [
    ["refund", "charge", "invoice", "billing", "card", "payment"],
    ["password", "login", "locked", "reset", "2fa", "account"],
    ["shipping", "delivery", "tracking", "courier", "parcel", "late"],
    ["crash", "error", "bug", "freeze", "update", "version"],
    ["cancel", "subscription", "plan", "renew", "downgrade", "trial"],
    ["api", "token", "webhook", "endpoint", "sdk", "integration"],
    ["privacy", "gdpr", "delete", "data", "export", "consent"],
]


def write_tickets(path, rng):
    filler = [f"w{i}" for i in range(4000)] + ["the", "a", "i", "my", "is", "not", "please", "help"]
    with open(path, "w") as f:
        for _ in range(N_TICKETS):
            q = int(rng.integers(N_QUEUES))
            n = int(rng.integers(1500, 3000))
            words = list(rng.choice(filler, n))
            for pos in rng.integers(0, 250, 8):
                words[pos] = str(rng.choice(QUEUE_WORDS[q])).upper() + rng.choice(
                    ["!", ",", "?", "."]
                )
            body = (
                " ".join(words)
                .replace(" w1 ", " <b>Hi</b> ")
                .replace(" w2 ", " http://x.io/t?id=7 ")
            )
            f.write(f"{q}\t{body}\n")


def make_lookup(path, sample_lines=800):
    counts = {}
    with open(path) as f:
        for n, line in enumerate(f):
            if n >= sample_lines:
                break
            for tok in line.split("\t", 1)[1].lower().split():
                tok = tok.strip("!,?.")
                counts[tok] = counts.get(tok, 0) + 1
    vocab = sorted(counts, key=counts.get, reverse=True)[: VOCAB_SIZE - 2]
    return keras.layers.StringLookup(vocabulary=vocab, mask_token="")


def make_dataset(path, lookup):
    def parse(line):
        parts = tf.strings.split(line, "\t", maxsplit=1)
        label = tf.strings.to_number(parts[0], tf.int32)
        text = tf.strings.lower(parts[1])
        text = tf.strings.regex_replace(text, r"<[^>]+>", " ")
        text = tf.strings.regex_replace(text, r"https?://\S+", " urltoken ")
        text = tf.strings.regex_replace(text, r"[^a-z0-9\s]", " ")
        text = tf.strings.regex_replace(text, r"\s+", " ")
        tokens = tf.strings.split(tf.strings.strip(text))[:MAX_TOKENS]
        return lookup(tokens), label

    ds = tf.data.TextLineDataset(path).shuffle(2000, seed=1).repeat().map(parse)
    return ds.padded_batch(BATCH_SIZE, padded_shapes=([MAX_TOKENS], []))


def build_model():
    inp = keras.Input(shape=(MAX_TOKENS,), dtype="int64")
    x = keras.layers.Embedding(VOCAB_SIZE, 64)(inp)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dropout(0.3)(x)
    out = keras.layers.Dense(N_QUEUES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._last is None:
            self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=2)
    return timer.seconds_per_step(), hist.history["accuracy"][-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(2)
    root = tempfile.mkdtemp(prefix="u18_input_textline_tickets_")
    try:
        path = os.path.join(root, "tickets.tsv")
        write_tickets(path, rng)
        lookup = make_lookup(path)
        ds = make_dataset(path, lookup)
        print(f"vocabulary size {lookup.vocabulary_size()}")

        sec, acc = train(ds)
        print(f"real input: {sec * 1000:.1f} ms/step, accuracy {acc:.3f}")
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
        if args.truth:
            batch = next(iter(ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            csec, _ = train(cached)
            frac = min(1.0, max(0.0, (sec - csec) / sec))
            print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
