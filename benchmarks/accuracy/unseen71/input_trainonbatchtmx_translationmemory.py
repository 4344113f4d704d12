"""Translation-memory quality estimation from TMX 1.4 exports (en -> de segment pairs).

Bottleneck (input): model.train_on_batch is fed from Python; each step renders a TMX
XML document, parses it with xml.etree.ElementTree, tokenises both segments, and
computes hashed bilingual n-gram and alignment features before a small MLP step.
"""
import time
WALL_T0 = time.perf_counter()
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

SCRIPT = os.path.splitext(os.path.basename(__file__))[0]
_ap = argparse.ArgumentParser()
_ap.add_argument("--truth", action="store_true",
                 help="after the normal run, rerun on one reused batch and report truth_input_fraction")
ARGS = _ap.parse_args()


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps, skip=5):
    g = gaps[skip:] if len(gaps) > skip else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


def finish(full_sec, compute_sec=None, extra=""):
    emit({"steps_per_second": 1.0 / full_sec})
    line = f"[{SCRIPT}] sec/step={full_sec:.4f} steps/s={1.0 / full_sec:.2f}"
    if compute_sec is not None:
        f = truth_fraction(full_sec, compute_sec)
        emit({"truth_input_fraction": f})
        line += f" compute_sec/step={compute_sec:.4f} truth_input_fraction={f:.3f}"
    line += f" wall={time.perf_counter() - WALL_T0:.1f}s" + (" " + extra if extra else "")
    print(line, flush=True)


keras.utils.set_random_seed(71)


import xml.etree.ElementTree as ET
import zlib

BATCH = 128
FEAT = 4096
STEPS = 60
EN = ("the library catalogue lists every printed edition of the manuscript and its translation "
      "into several languages with notes by the archivist and the editor").split()
DE = ("die bibliothek katalog verzeichnet jede gedruckte ausgabe der handschrift und ihre "
      "übersetzung in mehrere sprachen mit anmerkungen des archivars und des herausgebers").split()


def render_tmx(rng, n):
    tus, labels = [], []
    for i in range(n):
        L = int(rng.integers(10, 28))
        idx = rng.integers(len(EN), size=L)
        src = " ".join(EN[k] for k in idx)
        good = int(rng.random() < 0.5)
        tidx = idx if good else rng.integers(len(DE), size=L + int(rng.integers(-3, 4)))
        tgt = " ".join(DE[k % len(DE)] for k in tidx)
        tus.append(f'<tu tuid="{i}" creationdate="20240101T000000Z"><prop type="x-domain">archives</prop>'
                   f'<tuv xml:lang="en-GB"><seg>{src}</seg></tuv><tuv xml:lang="de-DE"><seg>{tgt}</seg></tuv></tu>')
        labels.append(good)
    doc = ('<?xml version="1.0" encoding="UTF-8"?><tmx version="1.4"><header srclang="en-GB" '
           'datatype="plaintext" segtype="sentence" adminlang="en" o-tmf="u71" creationtool="u71" '
           'creationtoolversion="1"/><body>' + "".join(tus) + "</body></tmx>")
    return doc.encode("utf-8"), np.array(labels, np.float32)


def featurize(doc):
    root = ET.fromstring(doc)
    rows = []
    for tu in root.iter("tu"):
        segs = {tuv.get("{http://www.w3.org/XML/1998/namespace}lang"): tuv.find("seg").text for tuv in tu.iter("tuv")}
        s, t = segs["en-GB"].split(), segs["de-DE"].split()
        v = np.zeros(FEAT, np.float32)
        for i, a in enumerate(s):
            for j, b in enumerate(t):
                if abs(i - j) <= 2:
                    v[zlib.crc32(f"{a}>{b}".encode()) % FEAT] += 1.0
        for seq, tag in ((s, "s"), (t, "t")):
            for a, b in zip(seq, seq[1:]):
                v[zlib.crc32(f"{tag}:{a}_{b}".encode()) % FEAT] += 1.0
        v[0] = len(t) / max(1, len(s))
        rows.append(np.log1p(v))
    return np.stack(rows)


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def train(batches):
    model = build_model()
    stamps = []
    for i in range(STEPS):
        x, y = batches()
        _ = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return mean_after_warmup(list(np.diff(stamps)))


rng = np.random.default_rng(71)


def next_batch():
    doc, y = render_tmx(rng, BATCH)
    return featurize(doc), y


full = train(next_batch)
compute = None
if ARGS.truth:
    fixed = next_batch()
    compute = train(lambda: fixed)
finish(full, compute)
