"""Lease-contract clause classifier (clause type from raw clause text).

Input: clause text shards written to a temp dir are read with
tf.data.Dataset.interleave over TextLineDataset; each batch is parsed by a
tf.py_function (defined-term, money and date extraction with regexes, word
and char n-gram hashing). Feeds model.fit.
"""
import time
WALL0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import keras

PARSER = argparse.ArgumentParser()
PARSER.add_argument("--truth", action="store_true",
                    help="also train on one cached batch and report the input fraction")
ARGS = PARSER.parse_args()
keras.utils.set_random_seed(68)


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


def finish(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    msg = f"[{name}] sec/step={full:.4f} steps/s={1.0 / full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute_sec/step={compute:.4f} truth_input_fraction={frac:.3f}"
    msg += extra + f" wall={time.perf_counter() - WALL0:.1f}s"
    print(msg, flush=True)
import random
import re
import zlib

NAME = "input_clausetokens_interleave_leasecontracts"
BATCH = 128
STEPS = 20
EPOCHS = 3
NFEAT = 1024
NSHARDS = 8
PER_SHARD = 1500
CLAUSE_SENTENCES = 2   # sentences per clause (parsing knob)
TYPES = ["RENT", "TERM", "DEPOSIT", "MAINTENANCE", "TERMINATION", "INDEMNITY", "ASSIGNMENT", "NOTICE"]
PHRASES = {
    "RENT": "Tenant shall pay monthly Rent of ${amt} on the first day of each month",
    "TERM": "The Term shall commence on {date} and expire {n} months thereafter",
    "DEPOSIT": "A Security Deposit of ${amt} shall be held by Landlord",
    "MAINTENANCE": "Tenant shall keep the Premises in good repair at its sole cost",
    "TERMINATION": "Either Party may terminate this Lease upon {n} days written notice",
    "INDEMNITY": "Tenant shall indemnify and hold harmless Landlord from all Claims",
    "ASSIGNMENT": "Tenant shall not assign or sublet without prior written consent of Landlord",
    "NOTICE": "All notices shall be delivered to the addresses set forth in Section {n}",
}
FILLER = ("provided that notwithstanding the foregoing subject to applicable law the Parties agree "
          "hereunder herein thereof reasonable Premises Building Landlord Tenant Lease Agreement").split()

RE_MONEY = re.compile(r"\$\s?([\d,]+(?:\.\d\d)?)")
RE_DATE = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December) (\d{1,2}), (\d{4})\b")
RE_TERM = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+)*)\b")
RE_NUM = re.compile(r"\b(\d+)\b")
RE_WORD = re.compile(r"[a-z]+")
MONTHS = "January February March April May June July August September October November December".split()


def write_shards(root):
    r = random.Random(68)
    paths = []
    for s in range(NSHARDS):
        p = os.path.join(root, f"leases-{s:02d}.txt")
        with open(p, "w") as fh:
            for _ in range(PER_SHARD):
                t = r.randrange(len(TYPES))
                sents = []
                for _k in range(CLAUSE_SENTENCES):
                    key = TYPES[t] if r.random() < 0.6 else r.choice(TYPES)
                    sents.append(PHRASES[key].format(amt=f"{r.randint(500, 90000):,}.00",
                                                     date=f"{r.choice(MONTHS)} {r.randint(1, 28)}, {r.randint(2020, 2030)}",
                                                     n=r.randint(2, 90))
                                 + ", " + " ".join(r.choice(FILLER) for _ in range(10)) + ".")
                fh.write(f"{t}\t{s}.{r.randint(1, 40)}\t" + " ".join(sents) + "\n")
        paths.append(p)
    return paths


def clause_features(line):
    label, section, text = line.split("\t", 2)
    v = np.zeros(NFEAT, np.float32)
    amounts = [float(a.replace(",", "")) for a in RE_MONEY.findall(text)]
    dates = RE_DATE.findall(text)
    terms = RE_TERM.findall(text)
    for t in terms:
        v[zlib.crc32(t.encode()) % 128] += 1
    words = RE_WORD.findall(text.lower())
    for w in words:
        v[128 + zlib.crc32(w.encode()) % 384] += 1
    for a, b in zip(words, words[1:]):
        v[512 + zlib.crc32((a + " " + b).encode()) % 384] += 1
    low = text.lower()
    for i in range(0, len(low) - 4, 2):
        v[896 + zlib.crc32(low[i:i + 4].encode()) % 112] += 0.05
    v[:1008] /= max(1.0, len(words))
    v[1008] = len(amounts) / 4.0
    v[1009] = np.log1p(max(amounts)) / 12.0 if amounts else 0.0
    v[1010] = len(dates) / 4.0
    v[1011] = len(RE_NUM.findall(text)) / 10.0
    v[1012] = float(section.split(".")[0]) / NSHARDS
    return v, int(label)


def parse_batch(lines):
    out = [clause_features(l.decode()) for l in lines.numpy()]
    return np.stack([o[0] for o in out]), np.array([o[1] for o in out], np.int32)


def to_features(lines):
    x, y = tf.py_function(parse_batch, [lines], [tf.float32, tf.int32])
    x.set_shape((None, NFEAT))
    y.set_shape((None,))
    return x, y


def build_model():
    m = keras.Sequential([keras.Input((NFEAT,)), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(256, activation="relu"), keras.layers.Dense(len(TYPES))])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    root = tempfile.mkdtemp(prefix="u68_input_clausetokens_interleave_leasecontracts_")
    try:
        paths = write_shards(root)
        ds = (tf.data.Dataset.from_tensor_slices(paths).repeat()
              .interleave(tf.data.TextLineDataset, cycle_length=4, block_length=16)
              .batch(BATCH, drop_remainder=True).map(to_features).prefetch(1))
        full = train(ds)
        compute = None
        if ARGS.truth:
            xb, yb = next(iter(ds))
            compute = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
        finish(NAME, full, compute)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
