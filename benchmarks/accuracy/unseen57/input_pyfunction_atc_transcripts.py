"""Aviation: classify the intent of air-traffic-control radio transcripts.

Transcript lines (e.g. "delta four five niner climb and maintain flight level three
five zero") go through a tf.data map that calls tf.py_function per line: lower-casing,
regex tokenisation, ICAO phonetic-alphabet and spoken-digit normalisation ("niner" -> 9,
"flight level three five zero" -> FL350), callsign merging, then a Python dict vocabulary
lookup with padding to a fixed length. Batched with .batch() and no parallelism or
prefetch, so the Python tokeniser gates every step. model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
import re

N_LINES = 4000
MAXLEN = 40
VOCAB = 2000
BATCH = 64
STEPS = 60
EPOCHS = 3
INTENTS = ["climb", "descend", "heading", "contact", "taxi", "takeoff", "land", "hold"]
DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "niner"]
PHONETIC = ["alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
            "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
            "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"]
AIRLINES = ["delta", "united", "american", "speedbird", "lufthansa", "ryanair", "southwest", "jetblue"]
TEMPLATES = {
    "climb": "{cs} climb and maintain flight level {n3}",
    "descend": "{cs} descend and maintain {n1} thousand, reduce speed {n3} knots",
    "heading": "{cs} turn left heading {n3}, vectors for the {rw} approach",
    "contact": "{cs} contact {fac} on one {n3} decimal {n1}, good day",
    "taxi": "{cs} taxi to runway {rw} via {ph} {ph2}, hold short {rw}",
    "takeoff": "{cs} wind {n3} at {n1} runway {rw} cleared for takeoff",
    "land": "{cs} runway {rw} cleared to land, wind {n3} at {n1}",
    "hold": "{cs} hold at {ph} as published, expect further clearance {n1} {n1}",
}


def make_lines():
    rng = np.random.default_rng(57)
    lines, labels = [], []
    sp = lambda k: " ".join(DIGITS[int(d)] for d in rng.integers(0, 10, k))
    for i in range(N_LINES):
        lab = int(rng.integers(len(INTENTS)))
        cs = f"{rng.choice(AIRLINES)} {sp(int(rng.integers(2, 5)))}"
        txt = TEMPLATES[INTENTS[lab]].format(
            cs=cs, n3=sp(3), n1=sp(1), rw=f"{sp(2)} {rng.choice(['left', 'right', 'center'])}",
            ph=rng.choice(PHONETIC), ph2=rng.choice(PHONETIC),
            fac=rng.choice(["departure", "approach", "center", "ground", "tower"]))
        if rng.random() < 0.3:
            txt = txt.upper() + " ROGER"
        lines.append(txt)
        labels.append(lab)
    return lines, np.array(labels, np.int32)


LINES, LABELS = make_lines()
TOKEN_RE = re.compile(r"[a-z]+|\d+|[^\sa-z\d]")
DIGIT_MAP = {w: str(i) for i, w in enumerate(DIGITS)}
DIGIT_MAP["nine"] = "9"
PHON_SET = set(PHONETIC)
VOCAB_MAP = {}


def vocab_id(tok):
    if tok not in VOCAB_MAP:
        VOCAB_MAP[tok] = 2 + (sum(ord(c) * 31 ** k for k, c in enumerate(tok)) % (VOCAB - 2))
    return VOCAB_MAP[tok]


def tokenize(text_t):
    text = text_t.numpy().decode("utf-8").lower()
    raw = TOKEN_RE.findall(text)
    toks, digits = [], []
    for t in raw:
        if t in DIGIT_MAP:
            digits.append(DIGIT_MAP[t])
            continue
        if digits:
            num = "".join(digits)
            toks.append(("FL" + num) if toks[-2:] == ["flight", "level"] else ("N" + num))
            digits = []
        if t in PHON_SET:
            toks.append("WPT_" + t[0])
        elif t in AIRLINES:
            toks.append("CALLSIGN")
        elif t.isalpha() or t.isdigit():
            toks.append(t)
    if digits:
        toks.append("N" + "".join(digits))
    # character trigrams for robustness to transcription errors
    grams = [w[i:i + 3] for w in toks for i in range(max(1, len(w) - 2))]
    ids = [vocab_id(t) for t in toks] + [vocab_id("#" + g) for g in grams]
    ids = ids[:MAXLEN] + [0] * max(0, MAXLEN - len(ids))
    return np.array(ids, np.int32)


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((LINES, LABELS)).repeat()

    def _map(text, label):
        ids = tf.py_function(tokenize, [text], tf.int32)
        ids.set_shape((MAXLEN,))
        return ids, label

    return ds.map(_map).batch(BATCH)


def build_model():
    m = keras.Sequential([
        keras.Input((MAXLEN,), dtype="int32"),
        keras.layers.Embedding(VOCAB, 32),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(len(INTENTS)),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"input_pyfunction_atc_transcripts: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    finish_truth(full, compute)
