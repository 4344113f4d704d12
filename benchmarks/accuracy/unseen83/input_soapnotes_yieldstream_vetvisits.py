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
import re
import random
import zlib


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(gaps) / len(gaps)


# Veterinary visit records: each visit is a free-text SOAP note that is parsed
# in Python (regex vitals, token hashing) into a bag-of-words + vitals vector.
SPECIES = ["canine", "feline", "rabbit", "ferret", "cockatiel", "guinea pig"]
COMPLAINTS = ["vomiting", "lethargy", "limping", "itching", "coughing", "diarrhea",
              "dental tartar", "ear discharge", "weight loss", "annual vaccines",
              "hot spot", "eye squinting", "polyuria", "sneezing"]
FINDINGS = ["mild dehydration", "grade II murmur", "otitis externa", "flea dirt",
            "gingivitis", "pain on palpation", "normal exam", "enlarged lymph nodes",
            "conjunctivitis", "luxating patella", "overweight BCS 7/9"]
PLANS = ["maropitant", "amoxicillin-clavulanate", "meloxicam", "recheck 2 weeks",
         "bloodwork CBC chem", "dental cleaning", "DHPP booster", "rabies booster",
         "flea prevention", "diet change", "radiographs", "ear cytology"]
NUM_FEATS = 512
NUM_CLASSES = 6
BATCH = 64
STEPS = 140
EPOCHS = 4
VITAL_RE = re.compile(r"T(?P<t>\d+\.\d)F HR(?P<hr>\d+) RR(?P<rr>\d+) WT(?P<wt>\d+\.\d)kg")
TOKEN_RE = re.compile(r"[a-z][a-z\-/0-9]+")


def write_note(rng):
    species = rng.choice(SPECIES)
    lines = ["S: %s patient, owner reports %s for %d days; %s." % (
        species, rng.choice(COMPLAINTS), rng.randint(1, 14), rng.choice(COMPLAINTS))]
    lines.append("O: T%.1fF HR%d RR%d WT%.1fkg; %s; %s." % (
        rng.uniform(99.0, 104.5), rng.randint(60, 220), rng.randint(12, 60),
        rng.uniform(0.4, 48.0), rng.choice(FINDINGS), rng.choice(FINDINGS)))
    lines.append("A: r/o " + ", ".join(rng.sample(COMPLAINTS, 3)) + ".")
    lines.append("P: " + "; ".join(rng.sample(PLANS, 4)) + ".")
    return "\n".join(lines * 4)


def parse_note(note):
    vec = np.zeros(NUM_FEATS, dtype=np.float32)
    for tok in TOKEN_RE.findall(note.lower()):
        vec[zlib.crc32(tok.encode()) % (NUM_FEATS - 4)] += 1.0
        for a, b in zip(tok, tok[1:]):
            vec[(ord(a) * 31 + ord(b)) % (NUM_FEATS - 4)] += 0.1
    m = VITAL_RE.search(note)
    temp, hr, rr, wt = (float(m.group(k)) for k in ("t", "hr", "rr", "wt"))
    vec[-4:] = [(temp - 101.5) / 2.0, (hr - 120) / 50.0, (rr - 30) / 15.0, np.log1p(wt)]
    label = zlib.crc32(note[:40].encode()) % NUM_CLASSES
    return vec, label


def visit_stream(seed):
    rng = random.Random(seed)
    while True:
        xs = np.zeros((BATCH, NUM_FEATS), dtype=np.float32)
        ys = np.zeros((BATCH,), dtype=np.int32)
        for i in range(BATCH):
            xs[i], ys[i] = parse_note(write_note(rng))
        yield xs, ys


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((NUM_FEATS,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(NUM_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(dataset):
    model = build_model()
    timer = StepTimer()
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


sig = (tf.TensorSpec((BATCH, NUM_FEATS), tf.float32), tf.TensorSpec((BATCH,), tf.int32))
full_ds = tf.data.Dataset.from_generator(lambda: visit_stream(7), output_signature=sig)
full = train(full_ds)
emit({"steps_per_second": 1.0 / full})
summary = "vetvisits from_generator: %.2f ms/step" % (full * 1000)
if TRUTH:
    fixed = next(visit_stream(11))
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
