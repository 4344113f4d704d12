"""Glaze recipe sheets (free text) -> surface-finish classifier.

Studio glaze sheets are stored as plain text ("Cone 6 Satin Celadon: Custer
feldspar 24.5, silica 30, whiting 18 ... add red iron oxide 1.5").  A
keras.utils.PyDataset (workers=1) normalises each sheet, parses the
ingredient amounts, builds word + character-trigram ids and a weight vector,
and feeds model.fit.  Target: matte / satin / gloss / crawl-prone.
"""
import time; T0 = time.perf_counter()
import json
import math
import os
import re
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEQ = 384
VOCAB = 20000
BATCH = 160
EPOCHS = 3
N_SHEETS = BATCH * 55

INGREDIENTS = ["custer feldspar", "minspar 200", "nepheline syenite", "silica 325", "epk kaolin",
               "grolleg", "whiting", "wollastonite", "talc", "dolomite", "gerstley borate",
               "ferro frit 3134", "ferro frit 3124", "zinc oxide", "strontium carbonate",
               "lithium carbonate", "bentonite", "tin oxide", "zircopax", "red iron oxide",
               "cobalt carbonate", "copper carbonate", "rutile", "manganese dioxide", "chrome oxide"]
FINISH = ["matte", "satin", "gloss", "crawl"]
WORD_RE = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_sheets(n, seed):
    r = np.random.default_rng(seed)
    sheets, labels = [], []
    for i in range(n):
        k = int(r.integers(5, 11))
        picks = r.choice(len(INGREDIENTS), k, replace=False)
        amounts = r.dirichlet(np.ones(k)) * 100
        cone = int(r.choice([4, 5, 6, 10]))
        lines = [f"Glaze #{i}  Cone {cone}  {'oxidation' if r.random() < 0.7 else 'reduction'}",
                 f"Tested by studio member {int(r.integers(1, 80))}, bisque cone 04, dipped 3 s"]
        for p, a in zip(picks, amounts):
            lines.append(f"  {INGREDIENTS[p].title()} ..... {a:.1f} g")
        lines.append(f"Notes: {'pinholes on vertical walls' if r.random() < 0.2 else 'smooth'}; "
                     f"apply {r.uniform(0.5, 2.0):.2f} mm, slow cool {int(r.integers(0, 3))} h")
        silica = sum(a for p, a in zip(picks, amounts) if "silica" in INGREDIENTS[p])
        flux = sum(a for p, a in zip(picks, amounts) if INGREDIENTS[p] in ("whiting", "dolomite", "talc", "wollastonite"))
        label = 2 if silica > 25 else (0 if flux > 25 else (3 if "zinc" in " ".join(INGREDIENTS[p] for p in picks) else 1))
        sheets.append("\n".join(lines))
        labels.append(label)
    return sheets, np.array(labels, np.int32)


def tokenize(sheet):
    text = sheet.lower().replace(".....", " ")
    ids, weights = [], np.zeros(len(INGREDIENTS), np.float32)
    for line in text.splitlines():
        line = line.strip()
        for ing_i, ing in enumerate(INGREDIENTS):
            if line.startswith(ing):
                num = re.findall(r"\d+\.\d+", line)
                if num:
                    weights[ing_i] = float(num[-1]) / 100.0
        for w in WORD_RE.findall(line):
            ids.append(zlib.crc32(w.encode()) % (VOCAB // 2) + 1)
            padded = f"#{w}#"
            for n in (3, 4, 5):                                   # fastText-style char n-grams
                for j in range(len(padded) - n + 1):
                    ids.append(VOCAB // 2 + zlib.crc32(padded[j:j + n].encode()) % (VOCAB // 2 - 1) + 1)
    ids = ids[:SEQ] + [0] * max(0, SEQ - len(ids))
    return np.array(ids, np.int32), weights


class GlazeSheets(keras.utils.PyDataset):
    def __init__(self, sheets, labels, **kw):
        super().__init__(**kw)
        self.sheets, self.labels = sheets, labels

    def __len__(self):
        return math.ceil(len(self.sheets) / BATCH)

    def __getitem__(self, idx):
        lo = idx * BATCH
        toks, wts = zip(*(tokenize(s) for s in self.sheets[lo:lo + BATCH]))
        return (np.stack(toks), np.stack(wts)), self.labels[lo:lo + BATCH]


def make_model():
    tok_in = keras.Input((SEQ,), dtype="int32")
    wt_in = keras.Input((len(INGREDIENTS),))
    x = keras.layers.Embedding(VOCAB, 32)(tok_in)
    x = keras.layers.Conv1D(48, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    w = keras.layers.Dense(64, activation="relu")(wt_in)
    h = keras.layers.Concatenate()([x, w])
    h = keras.layers.Dense(128, activation="relu")(h)
    return keras.Model([tok_in, wt_in], keras.layers.Dense(len(FINISH))(h))


def train(data, steps=None):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


sheets, labels = make_sheets(N_SHEETS, 91)
pyds = GlazeSheets(sheets, labels, workers=1, use_multiprocessing=False)
full = train(pyds)
emit({"steps_per_second": 1.0 / full})
print(f"glazesheets: normal run {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = pyds[0]
    ds = tf.data.Dataset.from_tensors(fixed).repeat()
    compute = train(ds, steps=len(pyds))
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"glazesheets: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
