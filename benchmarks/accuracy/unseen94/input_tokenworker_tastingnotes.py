import time; T0 = time.perf_counter()
import json
import os
import sys
import tempfile
import shutil

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
        g = self.gaps[5:]
        return sum(g) / len(g)


# Tasting-note scorer: free-text tasting notes are generated per batch, normalised
# and tokenised in pure Python (word ids + hashed character trigrams) inside a
# keras.utils.PyDataset (workers=1), and a small embedding model regresses points.
import random
import re
import zlib

DESCRIPTORS = ("blackcurrant cassis cherry plum raspberry bramble fig prune violet rose "
               "leather tobacco cedar vanilla clove pepper liquorice graphite pencil-shavings "
               "wet-stone flint citrus lemon lime grapefruit peach apricot quince honeysuckle "
               "brioche toast butter hazelnut almond mushroom forest-floor earth truffle "
               "mint eucalyptus sage thyme garrigue olive smoke tar chocolate mocha coffee").split()
STRUCTURE = ("firm grippy silky supple chalky fine-grained dusty velvety tight austere "
             "plush generous lean taut bright vibrant flabby hot balanced long short "
             "lingering persistent mineral saline juicy").split()
VARIETIES = ["Cabernet Sauvignon", "Pinot Noir", "Syrah", "Riesling", "Chardonnay",
             "Nebbiolo", "Tempranillo", "Grenache", "Sauvignon Blanc", "Chenin Blanc"]
VOCAB = {w: i + 2 for i, w in enumerate(sorted(set(DESCRIPTORS + STRUCTURE)))}
SEQ = 96
TRI_BUCKETS = 2048
BATCH = 64
STEPS_PER_EPOCH = 80
EPOCHS = 8
SEED = 94
PUNCT = re.compile(r"[^a-z0-9\- ]+")


def write_note(rng):
    var = rng.choice(VARIETIES)
    vint = rng.randint(1998, 2024)
    words = []
    quality = 0.0
    for _ in range(rng.randint(6, 11)):
        d = rng.sample(DESCRIPTORS, 3)
        s = rng.choice(STRUCTURE)
        words.append("Notes of %s, %s and %s; %s tannins, %s finish." % (d[0], d[1], d[2], s, rng.choice(STRUCTURE)))
        quality += (STRUCTURE.index(s) % 7) / 7.0
    text = "%s %d. " % (var, vint) + " ".join(words)
    points = 80.0 + 20.0 * min(1.0, quality / 6.0)
    return text, points


def tokenize(text):
    clean = PUNCT.sub(" ", text.lower())
    toks = clean.split()
    ids = [VOCAB.get(t, 1) for t in toks][:SEQ]
    ids += [0] * (SEQ - len(ids))
    tri = []
    for t in toks:
        w = "<" + t + ">"
        for k in range(len(w) - 2):
            tri.append(zlib.crc32(w[k:k + 3].encode()) % TRI_BUCKETS + 1)
    tri = tri[:SEQ] + [0] * max(0, SEQ - len(tri))
    return ids, tri


class TastingNotes(keras.utils.PyDataset):
    def __init__(self, seed, **kw):
        super().__init__(**kw)
        self.seed = seed

    def __len__(self):
        return STEPS_PER_EPOCH

    def __getitem__(self, idx):
        rng = random.Random(self.seed * 100003 + idx)
        ids, tris, ys = [], [], []
        for _ in range(BATCH):
            text, pts = write_note(rng)
            a, b = tokenize(text)
            ids.append(a)
            tris.append(b)
            ys.append(pts)
        return ((np.asarray(ids, np.int32), np.asarray(tris, np.int32)),
                np.asarray(ys, np.float32))


def build_model():
    keras.utils.set_random_seed(SEED)
    w = keras.Input((SEQ,), dtype="int32")
    t = keras.Input((SEQ,), dtype="int32")
    ew = keras.layers.Embedding(len(VOCAB) + 2, 32)(w)
    et = keras.layers.Embedding(TRI_BUCKETS + 1, 32)(t)
    x = keras.layers.Concatenate()([ew, et])
    x = keras.layers.Conv1D(40, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model([w, t], out)
    m.compile(optimizer="adam", loss="mse")
    return m


def run(data):
    model = build_model()
    timer = StepTimer()
    if isinstance(data, keras.utils.PyDataset):
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = run(TastingNotes(SEED, workers=1, use_multiprocessing=False))
emit({"steps_per_second": 1.0 / full})
print("tasting notes PyDataset: %.2f ms/step, %.1f steps/s, wall %.1f s"
      % (full * 1e3, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    (a, b), y = TastingNotes(SEED + 1)[0]
    one = ((tf.constant(a), tf.constant(b)), tf.constant(y))
    compute = run(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
