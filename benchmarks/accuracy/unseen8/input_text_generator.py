"""Review sentiment classifier trained from a plain Python generator.

Raw review strings are normalised and split into word pieces by a small
greedy WordPiece tokenizer written in Python, batch by batch, inside the
generator that is handed straight to model.fit.
"""

import argparse
import json
import os
import random
import re
import time
import unicodedata

import keras
import numpy as np
import tensorflow as tf

MAX_LEN = 256
BATCH = 32
STEPS_PER_EPOCH = 70
EPOCHS = 6

POS = ["great", "wonderful", "loved", "brilliant", "superb", "enjoyable"]
NEG = ["awful", "boring", "hated", "terrible", "dull", "disappointing"]
FILLER_SYLL = ["ka", "lo", "mi", "tra", "ven", "dor", "sul", "pe", "rin", "gho", "ast", "ble"]


def fake_word(rng):
    return "".join(rng.choice(FILLER_SYLL) for _ in range(rng.randint(1, 4)))


def make_corpus(n, seed=0):
    rng = random.Random(seed)
    docs, labels = [], []
    for _ in range(n):
        y = rng.randint(0, 1)
        words = []
        for _ in range(rng.randint(400, 600)):
            r = rng.random()
            if r < 0.06:
                words.append(rng.choice(POS if y else NEG).capitalize())
            elif r < 0.08:
                words.append(rng.choice(NEG if y else POS))
            else:
                words.append(fake_word(rng))
            if rng.random() < 0.1:
                words[-1] += rng.choice([",", ".", "!", "?", "..."])
        docs.append(" ".join(words))
        labels.append(y)
    return docs, np.array(labels, dtype=np.float32)


def build_vocab():
    vocab = {"[PAD]": 0, "[UNK]": 1}
    for w in POS + NEG + FILLER_SYLL:
        vocab.setdefault(w, len(vocab))
        vocab.setdefault("##" + w, len(vocab))
    for a in FILLER_SYLL:
        for b in FILLER_SYLL:
            vocab.setdefault(a + b, len(vocab))
            vocab.setdefault("##" + a + b, len(vocab))
    return vocab


class WordPiece:
    def __init__(self, vocab):
        self.vocab = vocab
        self.punct = re.compile(r"([.,!?;:])")

    def normalize(self, text):
        text = unicodedata.normalize("NFKD", text).lower()
        text = "".join(c for c in text if not unicodedata.combining(c))
        return self.punct.sub(r" \1 ", text)

    def word_pieces(self, word):
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            cur = None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = "##" + sub
                if sub in self.vocab:
                    cur = sub
                    break
                end -= 1
            if cur is None:
                return [1]
            pieces.append(self.vocab[cur])
            start = end
        return pieces

    def encode(self, text):
        ids = []
        for word in self.normalize(text).split():
            ids.extend(self.word_pieces(word))
        ids = ids[:MAX_LEN]
        return ids + [0] * (MAX_LEN - len(ids))


def batch_generator(docs, labels, tokenizer, seed=0):
    rng = random.Random(seed)
    idx = list(range(len(docs)))
    while True:
        rng.shuffle(idx)
        for i in range(0, len(idx) - BATCH + 1, BATCH):
            chunk = idx[i : i + BATCH]
            x = np.array([tokenizer.encode(docs[j]) for j in chunk], dtype=np.int32)
            yield x, labels[chunk]


def build_model(vocab_size):
    model = keras.Sequential(
        [
            keras.Input((MAX_LEN,), dtype="int32"),
            keras.layers.Embedding(vocab_size, 64),
            keras.layers.Conv1D(64, 5, activation="relu", padding="same"),
            keras.layers.GlobalMaxPooling1D(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"]
    )
    return model


class Timer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_epoch_begin(self, epoch, logs=None):
        self.t = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        self.times.append(t - self.t)
        self.t = t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    docs, labels = make_corpus(2000)
    vocab = build_vocab()
    tok = WordPiece(vocab)
    model = build_model(len(vocab))

    timer = Timer()
    model.fit(
        batch_generator(docs, labels, tok),
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=EPOCHS,
        callbacks=[timer, keras.callbacks.EarlyStopping(monitor="loss", patience=2)],
        verbose=2,
    )
    measured = timer.times[5:]
    full = float(np.mean(measured))
    sps = len(measured) / sum(measured)
    print(f"{sps:.2f} train steps/sec")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({"steps_per_second": sps}) + "\n")

    if args.truth:
        xb, yb = next(batch_generator(docs, labels, tok, seed=1))
        one_batch = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        t2 = Timer()
        model.fit(
            one_batch,
            steps_per_epoch=STEPS_PER_EPOCH,
            epochs=len(timer.times) // STEPS_PER_EPOCH,
            callbacks=[t2],
            verbose=0,
        )
        compute = float(np.mean(t2.times[5:]))
        frac = min(1.0, max(0.0, (full - compute) / full))
        print(
            f"truth input fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
        )
        if out:
            with open(out, "a") as fh:
                fh.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
