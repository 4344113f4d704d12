"""Citation type classification from BibTeX shards (article, book, inproceedings, ...).

Bottleneck (input): tf.data interleaves line-per-entry BibTeX shard files written to a
temp folder, batches raw entries, and a tf.py_function map parses every entry with
regular expressions, splits author lists, folds LaTeX accent macros and hashes tokens,
in Python, before model.fit trains a small MLP.
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


import re
import zlib

BATCH = 96
FEAT = 2048
STEPS = 20
EPOCHS = 3
SHARDS = 8
PER_SHARD = 600
TYPES = ["article", "book", "inproceedings", "phdthesis", "incollection", "techreport"]
WORDS = ("corpus lexicon morphology syntax semantics translation dialect archive manuscript "
         "edition press printing catalog bibliography philology grammar phonology typology").split()
NAMES = ["M{\\\"u}ller", "Garc{\\'\\i}a", "Dvo{\\v{r}}{\\'a}k", "Smith", "Lef{\\`e}vre", "{\\O}stergaard", "Nakamura"]
FIELD_RE = re.compile(r'(\w+)\s*=\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}')
HEAD_RE = re.compile(r'@(\w+)\s*\{\s*([^,]+),')
ACCENT_RE = re.compile(r"\{?\\[\"'`^~v]\{?\\?(\w)\}?\}?")


def write_shards(folder):
    rng = np.random.default_rng(71)
    paths = []
    for s in range(SHARDS):
        p = os.path.join(folder, f"refs-{s:02d}.bib1")
        with open(p, "w") as fh:
            for i in range(PER_SHARD):
                t = int(rng.integers(len(TYPES)))
                authors = " and ".join(f"{NAMES[int(k)]}, {chr(65 + int(k))}." for k in rng.integers(len(NAMES), size=int(rng.integers(1, 5))))
                title = " ".join(WORDS[int(k)] for k in rng.integers(len(WORDS), size=int(rng.integers(5, 14))))
                venue = {0: "journal", 1: "publisher", 2: "booktitle", 3: "school", 4: "booktitle", 5: "institution"}[t]
                extra = ", pages = {%d--%d}" % (i, i + 20) if t in (0, 2, 4) else ""
                fh.write(f"@{TYPES[t]}{{key{s}_{i}, author = {{{authors}}}, title = {{{{{title.title()}}}}}, "
                         f"{venue} = {{{WORDS[int(rng.integers(len(WORDS)))].title()} Studies}}, year = {{{1900 + i % 120}}}{extra}}}\n")
        paths.append(p)
    return paths


def parse_batch(lines):
    x = np.zeros((len(lines), FEAT), np.float32)
    y = np.zeros((len(lines),), np.int32)
    for r, raw in enumerate(lines.numpy()):
        entry = raw.decode("utf-8")
        head = HEAD_RE.match(entry)
        y[r] = TYPES.index(head.group(1).lower())
        fields = {k.lower(): v for k, v in FIELD_RE.findall(entry)}
        for name in fields.get("author", "").split(" and "):
            last = ACCENT_RE.sub(r"\1", name.split(",")[0]).strip("{} ").lower()
            x[r, zlib.crc32(("au:" + last).encode()) % FEAT] += 1.0
        for k, v in fields.items():
            if k == "author":
                continue
            x[r, zlib.crc32(("f:" + k).encode()) % FEAT] += 1.0
            for tok in re.findall(r"[a-z]+", ACCENT_RE.sub(r"\1", v).lower()):
                x[r, zlib.crc32((k + ":" + tok).encode()) % FEAT] += 1.0
                for j in range(len(tok) - 3):
                    x[r, zlib.crc32(tok[j:j + 4].encode()) % FEAT] += 0.25
    return x, y


def to_tensors(lines):
    x, y = tf.py_function(parse_batch, [lines], [tf.float32, tf.int32])
    x.set_shape((None, FEAT))
    y.set_shape((None,))
    return x, y


def full_dataset(paths):
    files = tf.data.Dataset.from_tensor_slices(paths).repeat()
    return (files.interleave(tf.data.TextLineDataset, cycle_length=4, block_length=8)
            .batch(BATCH).map(to_tensors))


def build_model():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(len(TYPES))])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


tmp = tempfile.mkdtemp(prefix=f"u71_{SCRIPT}_")
try:
    shard_paths = write_shards(tmp)
    full = run(full_dataset(shard_paths))
    compute = None
    if ARGS.truth:
        batch = next(iter(full_dataset(shard_paths)))
        compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    finish(full, compute)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
