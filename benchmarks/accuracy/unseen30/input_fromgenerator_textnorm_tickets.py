"""Support-ticket priority classifier.

Raw ticket text (accents, URLs, e-mail addresses, ticket numbers, shouting) is
normalised in Python inside the generator of a tf.data.Dataset.from_generator
pipeline: NFKD unicode folding, lower-casing, regex clean-up, word hashing and
character-trigram hashing.  A custom training loop with a @tf.function step
consumes the batches.
"""
import argparse
import json
import os
import re
import time
import unicodedata
import zlib

import numpy as np
import tensorflow as tf
import keras

VOCAB = 30000
SEQ = 256
BATCH = 64
STEPS = 200
N_TICKETS = 3000
N_CLASSES = 4

URL_RE = re.compile(r"https?://\S+")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
NUM_RE = re.compile(r"\d+")
PUNCT_RE = re.compile(r"[^a-z<> ]+")


def make_vocabulary(rng, n=2500):
    syll = ["ka", "lo", "mi", "tre", "ser", "vé", "pu", "dan", "gö", "rix",
            "ne", "ta", "ço", "bil", "war", "ent", "ush", "pri", "ña", "od"]
    return ["".join(rng.choice(syll, size=rng.integers(2, 5))) for _ in range(n)]


def make_tickets(rng):
    words = make_vocabulary(rng)
    urgent = ["OUTAGE", "down", "urgent", "asap", "broken", "critique"]
    tickets, labels = [], []
    for i in range(N_TICKETS):
        label = int(rng.integers(0, N_CLASSES))
        n = int(rng.integers(60, 120))
        toks = list(rng.choice(words, size=n))
        for _ in range(label * 3):
            toks.insert(int(rng.integers(0, len(toks))), str(rng.choice(urgent)))
        toks.insert(int(rng.integers(0, len(toks))), f"https://help.example.com/t/{rng.integers(1e6)}")
        toks.insert(int(rng.integers(0, len(toks))), f"user{rng.integers(1e4)}@corp-mail.example.org")
        toks.insert(int(rng.integers(0, len(toks))), f"#{rng.integers(1e5)}!!")
        text = " ".join(t.upper() if rng.random() < 0.1 else t for t in toks)
        tickets.append(text)
        labels.append(label)
    return tickets, np.array(labels, dtype=np.int32)


def normalise(text):
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = URL_RE.sub(" <url> ", t)
    t = EMAIL_RE.sub(" <email> ", t)
    t = NUM_RE.sub(" <num> ", t)
    t = PUNCT_RE.sub(" ", t)
    toks = t.split()
    ids = [zlib.crc32(w.encode()) % (VOCAB - 1) + 1 for w in toks]
    for w in toks:
        padded = f"<{w}>"
        for i in range(len(padded) - 2):
            ids.append(zlib.crc32(padded[i:i + 3].encode()) % (VOCAB - 1) + 1)
    ids = ids[:SEQ]
    out = np.zeros(SEQ, dtype=np.int32)
    out[:len(ids)] = ids
    return out


def make_dataset(tickets, labels, seed):
    def gen():
        rng = np.random.default_rng(seed)
        while True:
            for i in rng.permutation(len(tickets)):
                yield normalise(tickets[i]), labels[i]

    ds = tf.data.Dataset.from_generator(
        gen,
        output_signature=(tf.TensorSpec((SEQ,), tf.int32), tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 64)(inp)
    x = keras.layers.Conv1D(80, 5, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inp, out)


def train(ds):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for x, y in ds.take(STEPS):
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[4:]
    return float(np.mean(gaps)), loss


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    tickets, labels = make_tickets(np.random.default_rng(0))

    full, loss = train(make_dataset(tickets, labels, seed=1))
    emit({"steps_per_second": 1.0 / full})
    msg = f"tickets: {STEPS} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}"
    if args.truth:
        batch = next(iter(make_dataset(tickets, labels, seed=2)))
        compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
