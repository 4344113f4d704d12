"""Tasting-cup notes (free text from the cupping bench) -> briskness score.

Notes are kept as raw strings in a tf.data pipeline; each record goes
through tf.py_function (serial map, no parallel calls) that lower-cases,
strips punctuation, applies a crude suffix stemmer, hashes unigrams and
bigrams into a vocabulary and pads to a fixed length.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import re
import zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 64
STEPS = 100
EPOCHS = 3
N_NOTES = 4000
WORDS_PER_NOTE = 110
MAXLEN = 160
VOCAB = 8192

DESCRIPTORS = ["bright", "brisk", "coppery", "malty", "muscatel", "flat", "dull", "thick",
               "pungent", "greenish", "tippy", "wiry", "brassy", "smoky", "biscuity", "floral",
               "astringent", "creamy", "soft", "burnt", "stewy", "mellow", "liquoring", "body",
               "infusion", "colouring", "golden", "weedy", "fruity", "harsh", "lively", "strength"]
FILLER = ["with", "a", "the", "and", "some", "good", "fair", "slightly", "very", "cup", "leaf",
          "on", "milk", "takes", "well", "shows", "notes", "of", "hint", "finish"]
POSITIVE = {"bright", "brisk", "lively", "pungent", "strength", "coppery", "golden", "tippy"}


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def write_notes(seed):
    rng = np.random.default_rng(seed)
    notes, scores = [], []
    for i in range(N_NOTES):
        words = []
        for _ in range(WORDS_PER_NOTE):
            if rng.random() < 0.45:
                w = DESCRIPTORS[rng.integers(len(DESCRIPTORS))]
                words.append(w.capitalize() if rng.random() < 0.2 else w)
            else:
                words.append(FILLER[rng.integers(len(FILLER))])
            if rng.random() < 0.12:
                words[-1] += rng.choice([",", ";", ".", "!"])
        text = "Lot %d / Cup %d: " % (2300 + i // 6, i % 6 + 1) + " ".join(words)
        pos = sum(1 for w in words if w.strip(",;.!").lower() in POSITIVE)
        notes.append(text)
        scores.append(pos / WORDS_PER_NOTE * 10.0)
    return np.array(notes), np.array(scores, np.float32)


TOKEN_RE = re.compile(r"[a-z]+")


def stem(w):
    for suf in ("ing", "ish", "ness", "ed", "ly", "y", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[:-len(suf)]
    return w


def tokenize_note(raw):
    text = raw.numpy().decode("utf-8").lower()
    body = text.split(":", 1)[-1]
    body = re.sub(r"[,;.!]", " ", body)
    toks = [stem(t) for t in TOKEN_RE.findall(body)]
    ids = [zlib.crc32(t.encode()) % (VOCAB // 2) + 1 for t in toks]
    ids += [zlib.crc32((a + "_" + b).encode()) % (VOCAB // 2) + VOCAB // 2
            for a, b in zip(toks, toks[1:])]
    ids = ids[:MAXLEN] + [0] * max(0, MAXLEN - len(ids))
    return np.array(ids, np.int32)


def to_features(note, score):
    ids = tf.py_function(tokenize_note, [note], tf.int32)
    ids.set_shape((MAXLEN,))
    return ids, score


def make_dataset(notes, scores):
    ds = tf.data.Dataset.from_tensor_slices((notes, scores)).shuffle(N_NOTES, seed=3).repeat()
    return ds.map(to_features).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((MAXLEN,), dtype="int32"),
        keras.layers.Embedding(VOCAB, 64),
        keras.layers.Conv1D(64, 5, padding="same", activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


notes, scores = write_notes(21)
full = train(make_dataset(notes, scores))
emit({"steps_per_second": 1.0 / full})
print("[cupnotes] normal run: %.4f s/step, %.2f steps/s, wall %.1f s"
      % (full, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    one = next(iter(make_dataset(notes, scores)))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[cupnotes] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
