"""Vinyl record matrix numbers: runout-groove etchings -> pressing plant.

A Python loop synthesises dead-wax inscriptions (catalogue prefix, side,
lacquer cut, stamper letters, mastering signatures, plant logos), parses
them with regular expressions, hashes word and character n-grams into a
bucket vector, and pushes each batch through model.train_on_batch.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import re
import random
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 128
STEPS = 560
BUCKETS = 2048
N_NUM = 8
PLANTS = ["EMI Hayes", "Decca New Malden", "Pye", "Columbia Pitman", "RCA Indianapolis",
          "Capitol Scranton", "Capitol Jacksonville", "Allied Record", "Specialty",
          "Monarch", "PRC Richmond", "Nimbus"]
PLANT_MARKS = [["G", "O", "R", "D", "O", "N"], ["ZAL", "ARL", "XARL"], ["NPL", "PYE"],
               ["P", "Pitman"], ["RE1", "RE2", "I"], ["IAM", "triangle"], ["0", "J"],
               ["L", "AR"], ["SP", "K"], ["MR", "delta"], ["PRC", "R"], ["NIMBUS", "DMM"]]
ENGINEERS = ["PORKY PRIME CUT", "STERLING", "MASTERDISK", "RL", "BG", "TML", "AJ",
             "Bernie", "H7", "BELL SOUND", "DMM", "ARCHIE"]
PREFIXES = ["YEX", "PCS", "SKL", "LSP", "SMAS", "SO", "CL", "ST", "AL", "KC", "ILPS"]
MATRIX_RE = re.compile(r"([A-Z]{1,5})[- ]?(\d{2,6})[- ]?([A-Z]?\d{0,2})")
DIGIT_RE = re.compile(r"\d")
STAMPER_RE = re.compile(r"\b(\d{1,2}[A-Z]{0,2})\b")


def etch(rng, plant):
    pre = rng.choice(PREFIXES)
    num = rng.randint(100, 99999)
    side = rng.choice(["1", "2", "A", "B", "A1", "B2"])
    parts = [f"{pre}-{num}-{side}", f"{pre} {num} {side}"][rng.random() < 0.5:][:1]
    parts += rng.sample(PLANT_MARKS[plant], min(2, len(PLANT_MARKS[plant])))
    parts += rng.sample(ENGINEERS, rng.randint(0, 2))
    parts.append(str(rng.randint(1, 12)) + rng.choice(["", "A", "B", "G", "R"]))
    if rng.random() < 0.3:
        parts.append(rng.choice(PLANT_MARKS[rng.randrange(len(PLANTS))]))  # confusers
    rng.shuffle(parts)
    return "  ".join(parts)


def featurise(text):
    vec = np.zeros(BUCKETS + N_NUM, np.float32)
    low = text.lower()
    words = low.split()
    for w in words:
        vec[zlib.crc32(b"w:" + w.encode()) % BUCKETS] += 1.0
    for a, b in zip(words, words[1:]):
        vec[zlib.crc32(("b:" + a + " " + b).encode()) % BUCKETS] += 0.5
    for variant in (low, DIGIT_RE.sub("#", low)):
        for n in (2, 3, 4, 5, 6):
            for i in range(len(variant) - n + 1):
                vec[zlib.crc32(variant[i:i + n].encode()) % BUCKETS] += 0.2
    m = MATRIX_RE.search(text)
    stampers = STAMPER_RE.findall(text)
    if m:
        vec[BUCKETS] = len(m.group(1)) / 5.0
        vec[BUCKETS + 1] = np.log1p(int(m.group(2))) / 12.0
        vec[BUCKETS + 2] = 1.0 if m.group(3) else 0.0
    vec[BUCKETS + 3] = len(stampers) / 4.0
    vec[BUCKETS + 4] = len(words) / 10.0
    vec[BUCKETS + 5] = sum(c.isdigit() for c in text) / 20.0
    vec[BUCKETS + 6] = 1.0 if "-" in text else 0.0
    vec[BUCKETS + 7] = len(text) / 80.0
    return vec


def make_batch(rng):
    xs = np.empty((BATCH, BUCKETS + N_NUM), np.float32)
    ys = np.empty((BATCH,), np.int32)
    for i in range(BATCH):
        plant = rng.randrange(len(PLANTS))
        xs[i] = featurise(etch(rng, plant))
        ys[i] = plant
    return xs, ys


def build_model():
    inp = keras.Input((BUCKETS + N_NUM,))
    x = layers.Dense(512, activation="relu")(inp)
    x = layers.Dense(512, activation="relu")(x)
    x = layers.Dense(256, activation="relu")(x)
    out = layers.Dense(len(PLANTS), activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(5e-4),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(batch_source):
    keras.utils.set_random_seed(33)
    model = build_model()
    stamps = []
    loss_value = float("nan")
    for step in range(STEPS):
        xb, yb = batch_source()
        result = model.train_on_batch(xb, yb)
        loss_value = float(result[0])
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss_value


def main():
    rng = random.Random(1955)
    full, loss = train(lambda: make_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    print(f"[vinylmatrix] normal run: {full * 1000:.1f} ms/step, final loss {loss:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        fixed = make_batch(random.Random(7))
        compute, _ = train(lambda: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[vinylmatrix] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
