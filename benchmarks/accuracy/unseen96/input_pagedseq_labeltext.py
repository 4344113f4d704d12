"""Address-label OCR text -> delivery-zone classifier.

Input path: a keras.utils.PyDataset (workers=1) whose __getitem__ synthesises address
label strings in Python, normalises them and hashes character trigrams into token ids;
fed to model.fit. Known bottleneck: Python text processing in __getitem__ (input-bound).
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 96
STEPS = 60
EPOCHS = 3
SEQ = 96
VOCAB = 8192
N_ZONES = 24
NORMALISE_PASSES = 2


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


STREETS = ["Harbour Road", "Mill Lane", "Station Street", "Kings Avenue", "Church Walk",
           "Orchard Close", "Victoria Terrace", "Canal Side", "Market Place", "Rose Crescent"]
TOWNS = ["Northbridge", "Eastleigh", "Westmoor", "Southfield", "Ashby", "Kirkton",
         "Lowhaven", "Brookdale", "Fernhill", "Oakridge", "Pinewold", "Redcliff"]
NAMES = ["A. Patel", "J. Morgan", "L. Nowak", "S. Okafor", "M. Rossi", "K. Tanaka",
         "R. Silva", "E. Dubois", "H. Jensen", "T. Murphy"]
OCR_NOISE = {"O": "0", "I": "1", "S": "5", "B": "8", "l": "1", "e": "c"}


def make_label(rng):
    zone = int(rng.integers(0, N_ZONES))
    town = TOWNS[zone % len(TOWNS)]
    pc = f"{'NESW'[zone % 4]}{zone:02d} {int(rng.integers(1, 9))}{chr(65 + int(rng.integers(0, 26)))}{chr(65 + int(rng.integers(0, 26)))}"
    text = (f"{NAMES[int(rng.integers(0, len(NAMES)))]}\n{int(rng.integers(1, 240))} "
            f"{STREETS[int(rng.integers(0, len(STREETS)))]}\n{town}\n{pc}")
    # simulate OCR confusion on the scanned label
    chars = [OCR_NOISE.get(c, c) if rng.random() < 0.05 else c for c in text]
    return "".join(chars), zone


def normalise(text):
    out = text
    for _ in range(NORMALISE_PASSES):
        out = out.upper().replace("0", "O").replace("1", "I").replace("5", "S")
        out = " ".join(tok.strip(".,") for tok in out.split())
        out = "".join(c if c.isalnum() or c == " " else " " for c in out)
    return out


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def correct_against_gazetteer(text):
    """Snap the OCR'd street and town lines to the nearest gazetteer entry."""
    lines = text.split("\n")
    street_line = lines[1].split(" ", 1)[-1] if len(lines) > 1 else ""
    town_line = lines[2] if len(lines) > 2 else ""
    street = min(STREETS, key=lambda s: edit_distance(street_line, s))
    town = min(TOWNS, key=lambda t: edit_distance(town_line, t))
    lines[1:3] = [lines[1].split(" ", 1)[0] + " " + street, town]
    return "\n".join(lines)


def tokenize(text):
    padded = f"^^{text}$$"
    ids = []
    for i in range(len(padded) - 2):
        tri = padded[i:i + 3]
        h = 2166136261
        for ch in tri:
            h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
        ids.append(h % (VOCAB - 1) + 1)
    ids = ids[:SEQ]
    return ids + [0] * (SEQ - len(ids))


class LabelPages(keras.utils.PyDataset):
    def __init__(self, n_batches, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(9600 + idx)
        x = np.zeros((BATCH, SEQ), np.int32)
        y = np.zeros((BATCH,), np.int32)
        for i in range(BATCH):
            text, zone = make_label(rng)
            x[i] = tokenize(normalise(correct_against_gazetteer(text)))
            y[i] = zone
        return x, y


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, 128)(inp)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(N_ZONES)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(data):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = run(LabelPages(STEPS, workers=1, use_multiprocessing=False))
emit({"steps_per_second": 1.0 / full})
print(f"labeltext: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    batch = LabelPages(STEPS, workers=1, use_multiprocessing=False)[0]
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"labeltext truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
