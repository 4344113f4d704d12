"""Support-ticket triage (route each ticket to one of eight queues).

Tickets are raw strings.  Every batch is tokenised in pure Python: regex
normalisation of e-mail addresses, order numbers and URLs, a word regex,
dictionary lookups into a vocabulary, hashed word bigrams for extra features,
then padding.  The batch is handed to model.train_on_batch in a plain loop.
"""
import argparse
import json
import os
import re
import time
import zlib

import numpy as np
import tensorflow as tf
import keras

N_TICKETS = 3000
WORDS_PER_TICKET = (400, 700)
MAXLEN = 512
VOCAB = 6000
BUCKETS = 20000
BATCH = 128
STEPS = 40
EPOCHS = 2
QUEUES = 8

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
ORDER = re.compile(r"\b(?:ord|order)[#:\s-]*\d{5,}\b", re.I)
URL = re.compile(r"https?://\S+")
WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+|[!?]")


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def synth_tickets(rng):
    base = ["refund", "invoice", "login", "password", "shipping", "delay", "broken", "screen", "charge",
            "account", "cancel", "upgrade", "plan", "error", "crash", "app", "delivery", "address", "card",
            "declined", "warranty", "replace", "battery", "the", "my", "is", "not", "please", "help", "since",
            "yesterday", "order", "again", "still", "cannot", "when", "will", "i", "you", "it", "was"]
    words = base + [f"w{i}{chr(97 + i % 26)}" for i in range(3000)]
    texts, labels = [], []
    for i in range(N_TICKETS):
        q = int(rng.integers(0, QUEUES))
        n = int(rng.integers(*WORDS_PER_TICKET))
        toks = list(rng.choice(words, n))
        toks[::7] = [base[(q * 3 + k) % len(base)] for k in range(len(toks[::7]))]
        text = " ".join(toks).capitalize()
        text += f" Contact me at user{i}@mail.example.com re order #{100000 + i}, see https://shop.example.com/t/{i}!"
        texts.append(text)
        labels.append(q)
    return texts, np.array(labels, dtype=np.int32)


def normalise(text):
    text = EMAIL.sub(" emailtok ", text)
    text = ORDER.sub(" ordertok ", text)
    text = URL.sub(" urltok ", text)
    return text.lower()


def build_vocab(texts):
    counts = {}
    for t in texts[:500]:
        for w in WORD.findall(normalise(t)):
            counts[w] = counts.get(w, 0) + 1
    ranked = sorted(counts, key=lambda w: -counts[w])[: VOCAB - 2]
    return {w: i + 2 for i, w in enumerate(ranked)}


def encode(text, vocab):
    toks = WORD.findall(normalise(text))
    ids = [vocab.get(w, 1) for w in toks]
    bigrams = [VOCAB + (zlib.crc32((a + "_" + b).encode()) % BUCKETS) for a, b in zip(toks, toks[1:])]
    seq = (ids + bigrams)[:MAXLEN]
    return seq + [0] * (MAXLEN - len(seq))


def batches(texts, labels, vocab, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.choice(len(texts), BATCH, replace=False)
        yield np.array([encode(texts[i], vocab) for i in idx], dtype=np.int32), labels[idx]


def build_model():
    inp = keras.Input((MAXLEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB + BUCKETS, 32)(inp)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(QUEUES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def train(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    gaps = []
    t0 = time.perf_counter()
    for epoch in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = next_batch()
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return seconds_per_step(gaps), time.perf_counter() - t0, loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    texts, labels = synth_tickets(np.random.default_rng(5))
    vocab = build_vocab(texts)
    gen = batches(texts, labels, vocab, 13)
    full, wall, loss = train(lambda: next(gen))
    emit({"steps_per_second": 1.0 / full})
    msg = f"tickets: {1.0 / full:.2f} steps/s, loop {wall:.1f}s, loss {loss:.4f}"
    if args.truth:
        x1, y1 = next(batches(texts, labels, vocab, 99))
        compute, _, _ = train(lambda: (x1, y1))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
    print(msg)


if __name__ == "__main__":
    main()
