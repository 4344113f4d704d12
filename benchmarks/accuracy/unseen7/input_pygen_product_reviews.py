# Sentiment model for product reviews, trained straight from a Python generator.
# The generator samples raw review strings and does the tokenisation on the fly
# (lower-casing, regex split, negation marking, vocab lookup, hashing of bigrams,
# padding) for every batch it yields.
import json
import os
import re
import sys
import time
import unicodedata

import keras
import numpy as np

MAX_LEN = 100
VOCAB_SIZE = 8000
HASH_BUCKETS = 4000
BATCH_SIZE = 128
STEPS_PER_EPOCH = 150
EPOCHS = 5
TRUTH = "--truth" in sys.argv

POS = [
    "great",
    "excellent",
    "love",
    "perfect",
    "sturdy",
    "fast",
    "comfortable",
    "recommend",
    "amazing",
    "works",
    "happy",
    "solid",
    "bright",
    "easy",
]
NEG = [
    "broken",
    "terrible",
    "refund",
    "slow",
    "cheap",
    "disappointed",
    "returned",
    "flimsy",
    "awful",
    "noisy",
    "leaks",
    "waste",
    "stopped",
    "poor",
]
FILLER = (
    "the this it i we my product item battery screen strap box arrived after days use "
    "with for and but was is really very quite not too at all would again size color "
    "quality price delivery seller charger cable fits looks feels"
).split()

rng = np.random.default_rng(123)


def fake_review(label):
    words = list(rng.choice(FILLER, size=rng.integers(120, 320)))
    good, bad = (POS, NEG) if label else (NEG, POS)
    for _ in range(rng.integers(2, 6)):
        words.insert(rng.integers(0, len(words)), rng.choice(good))
    if rng.random() < 0.3:
        words.insert(rng.integers(0, len(words)), "not " + rng.choice(bad))
    text = " ".join(words)
    text = text[0].upper() + text[1:] + rng.choice(["!", ".", "!!", " :)", "..."])
    return text


CORPUS_LABELS = rng.integers(0, 2, size=3000)
CORPUS = [fake_review(int(l)) for l in CORPUS_LABELS]

TOKEN_RE = re.compile(r"[a-z']+|[!?.:)(]+")
HTML_RE = re.compile(r"<[^>]+>|https?://\S+")
SUFFIXES = ("ingly", "edly", "ing", "ed", "ly", "es", "s", "er", "est")


def stem(word):
    for suf in SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)]
    return word


vocab = {"<pad>": 0, "<unk>": 1}
for w in POS + NEG + FILLER + ["!", ".", "!!", ":)", "..."]:
    vocab.setdefault(w, len(vocab))


def tokenize(text):
    text = unicodedata.normalize("NFKC", HTML_RE.sub(" ", text))
    toks = TOKEN_RE.findall(text.lower())
    out, negate = [], False
    for t in toks:
        t = stem(t) if t not in vocab else t
        if t in ("not", "no", "never"):
            negate = True
            continue
        tid = vocab.get(t, 1)
        if negate:
            tid = (tid + VOCAB_SIZE // 2) % VOCAB_SIZE
            negate = False
        out.append(tid)
    bigrams = [VOCAB_SIZE + (hash((a, b)) % HASH_BUCKETS) for a, b in zip(out, out[1:])]
    ids = (out + bigrams)[:MAX_LEN]
    return ids + [0] * (MAX_LEN - len(ids))


def review_batches(batch_size=BATCH_SIZE):
    """Endless generator of tokenised (x, y) batches."""
    while True:
        idx = rng.integers(0, len(CORPUS), size=batch_size)
        x = np.array([tokenize(CORPUS[i]) for i in idx], dtype=np.int32)
        y = CORPUS_LABELS[idx].astype(np.float32)
        yield x, y


def make_model():
    inp = keras.Input(shape=(MAX_LEN,), dtype="int32")
    e = keras.layers.Embedding(VOCAB_SIZE + HASH_BUCKETS, 32)(inp)
    h = keras.layers.Conv1D(32, 3, activation="relu")(e)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(32, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(2e-3), loss="binary_crossentropy", metrics=["accuracy"]
    )
    return model


class TimeEachBatch(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def dump(key, val):
    target = os.environ.get("ACCURACY_OUT")
    if target:
        with open(target, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


model = make_model()
print(f"vocab {len(vocab)} words + {HASH_BUCKETS} bigram buckets; sample: {CORPUS[0][:70]}...")
tic = time.perf_counter()
model.fit(
    review_batches(),
    steps_per_epoch=STEPS_PER_EPOCH,
    epochs=EPOCHS,
    verbose=2,
    callbacks=[keras.callbacks.TerminateOnNaN()],
)
toc = time.perf_counter()
n = STEPS_PER_EPOCH * EPOCHS
print(f"{n / (toc - tic):.2f} steps/sec")
dump("steps_per_second", n / (toc - tic))

if TRUTH:
    full_cb = TimeEachBatch()
    model.fit(
        review_batches(),
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=EPOCHS,
        verbose=0,
        callbacks=[full_cb],
    )
    fixed_x, fixed_y = next(review_batches())

    def same_batch():
        while True:
            yield fixed_x, fixed_y

    comp_cb = TimeEachBatch()
    model.fit(
        same_batch(), steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, verbose=0, callbacks=[comp_cb]
    )
    full = np.mean(np.diff(full_cb.ends[5:]))
    comp = np.mean(np.diff(comp_cb.ends[5:]))
    frac = float(np.clip((full - comp) / full, 0, 1))
    print(f"truth: full {full * 1e3:.1f} ms  compute-only {comp * 1e3:.1f} ms  -> input {frac:.3f}")
    dump("truth_input_fraction", frac)
