import time; T0 = time.perf_counter()
import json
import os
import sys
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")
import random
import re
import zlib


# Shelter adoption listings: each listing (name, breed, age, temperament blurb) is
# written and tokenised in Python (lower-case, regex split, word + bigram hashing)
# into a fixed-length id sequence; a Python loop calls model.train_on_batch to
# predict "adopted within 30 days".
NAMES = ["Biscuit", "Luna", "Mochi", "Rocky", "Pepper", "Hazel", "Ziggy", "Olive",
         "Bandit", "Clover", "Juniper", "Tater Tot", "Waffles", "Nala", "Ghost"]
BREEDS = ["pit bull mix", "domestic shorthair", "chihuahua", "labrador retriever",
          "german shepherd mix", "tabby", "beagle", "siamese mix", "husky", "terrier mix",
          "holland lop rabbit", "calico", "border collie", "tuxedo cat"]
TRAITS = ["loves belly rubs", "crate trained", "shy at first", "good with kids",
          "needs a cat-free home", "house trained", "knows sit and paw", "senior sweetheart",
          "high energy", "leash reactive", "couch potato", "FIV positive", "bonded pair",
          "heartworm treated", "special diet", "loves squeaky toys", "fence jumper"]
VOCAB = 20000
SEQ = 160
BATCH = 64
STEPS = 800
TOKEN_RE = re.compile(r"[a-z0-9']+")


def write_listing(rng):
    name = rng.choice(NAMES)
    parts = ["Meet %s! %s is a %d-year-old %s %s, %d lbs." % (
        name, name, rng.randint(0, 14), rng.choice(["male", "female"]), rng.choice(BREEDS),
        rng.randint(4, 90))]
    for _ in range(6):
        parts.append("%s %s and %s." % (name, rng.choice(TRAITS), rng.choice(TRAITS)))
    parts.append("Adoption fee $%d, vaccinated, spayed/neutered, microchipped." % rng.choice([25, 50, 95, 150, 250]))
    return " ".join(parts)


def tokenize(text):
    words = TOKEN_RE.findall(text.lower())
    ids = [zlib.crc32(w.encode()) % (VOCAB - 1) + 1 for w in words]
    ids += [zlib.crc32((a + "_" + b).encode()) % (VOCAB - 1) + 1 for a, b in zip(words, words[1:])]
    # character trigrams make the features robust to volunteer typos ("houes trained")
    for w in words:
        padded = "<" + w + ">"
        ids += [zlib.crc32(padded[i:i + 3].encode()) % (VOCAB - 1) + 1 for i in range(len(padded) - 2)]
    ids.sort(key=lambda t: (t * 2654435761) % 4294967296)
    ids = ids[:SEQ]
    return ids + [0] * (SEQ - len(ids))


def make_batch(rng):
    xs = np.zeros((BATCH, SEQ), dtype=np.int32)
    ys = np.zeros((BATCH, 1), dtype=np.float32)
    for i in range(BATCH):
        text = write_listing(rng)
        xs[i] = tokenize(text)
        ys[i, 0] = float(("good with kids" in text) or ("house trained" in text and "$25" in text))
    return xs, ys


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, 32)(inp)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(batch_source):
    model = build_model()
    gaps, last = [], None
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    gaps = gaps[5:]
    return sum(gaps) / len(gaps), loss


stream_rng = random.Random(2026)
full, last_loss = train(lambda step: make_batch(stream_rng))
emit({"steps_per_second": 1.0 / full})
summary = "shelter listings train_on_batch: %.2f ms/step (loss %.3f)" % (full * 1000, last_loss)
if TRUTH:
    fx, fy = make_batch(random.Random(7))
    compute, _ = train(lambda step: (fx, fy))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
