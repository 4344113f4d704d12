import time
_WALL_T0 = time.perf_counter()
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


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true",
                   help="also run the single-reused-batch twin and report truth_input_fraction")
    return p.parse_args()


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at each batch end; gaps only within an epoch."""

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


def sec_per_step(gaps):
    g = list(gaps)[5:]
    if not g:
        g = list(gaps)
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


# ---------------------------------------------------------------------------
# Book genre classification from EPUB chapter files: a Python loop parses
# XHTML chapters with html.parser.HTMLParser (skipping <nav>, <style> and
# footnotes), normalises entities, tokenises with a regex, hashes unigrams and
# bigrams and applies log scaling, then calls model.train_on_batch on each
# batch. train_on_batch returns the loss, converted to a Python float.
# ---------------------------------------------------------------------------
import html
import re
import zlib
from html.parser import HTMLParser

SEED = 60
N_CHAPTERS = 400
N_PARAS = 24
N_HASH = 2048
N_GENRES = 7
BATCH = 32
STEPS = 60
EPOCHS = 2
TOKEN_RE = re.compile(r"[a-z']+")
LEX = [["dragon", "sword", "kingdom", "spell", "quest"], ["detective", "clue", "alibi", "corpse", "inspector"],
       ["starship", "orbit", "android", "reactor", "colony"], ["duke", "ballroom", "letter", "heart", "marriage"],
       ["shadow", "scream", "cellar", "blood", "curse"], ["empire", "treaty", "battle", "century", "siege"],
       ["recipe", "garden", "journey", "memory", "village"]]
FILLER = ["the", "she", "he", "said", "and", "was", "into", "before", "night", "door", "light", "again",
          "looked", "never", "across", "quietly", "room", "hand", "voice", "window"]


def make_chapter(rng, genre):
    paras = []
    for i in range(N_PARAS):
        words = list(rng.choice(FILLER, 18)) + list(rng.choice(LEX[genre], 2)) + \
            list(rng.choice(LEX[int(rng.integers(0, N_GENRES))], 1))
        rng.shuffle(words)
        text = " ".join(words).capitalize() + "."
        if rng.random() < 0.2:
            text = text.replace(" and ", " &amp; ", 1) + ' <em>“%s”</em>' % rng.choice(FILLER)
        if rng.random() < 0.1:
            text += '<a epub:type="noteref" href="#fn%d">%d</a>' % (i, i)
        paras.append('<p class="p%d">%s</p>' % (i % 3, text))
    notes = "".join('<aside epub:type="footnote" id="fn%d"><p>Note %s</p></aside>' % (i, rng.choice(FILLER))
                    for i in range(4))
    return ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
            'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Chapter</title><style>p{margin:0}'
            '</style></head><body><nav><ol><li>Contents</li></ol></nav><section><h1>Chapter %d</h1>%s'
            '</section>%s</body></html>' % (int(rng.integers(1, 40)), "".join(paras), notes))


class ChapterText(HTMLParser):
    SKIP = {"nav", "style", "aside", "title"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth_skip = 0
        self.chunks = []
        self.n_p = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth_skip += 1
        if tag == "p":
            self.n_p += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth_skip:
            self.depth_skip -= 1

    def handle_data(self, data):
        if not self.depth_skip:
            self.chunks.append(data)


def featurise(xhtml):
    p = ChapterText()
    p.feed(xhtml)
    text = html.unescape(" ".join(p.chunks)).lower()
    toks = TOKEN_RE.findall(text)
    hv = np.zeros(N_HASH, np.float32)
    for a, b in zip(toks, toks[1:]):
        hv[zlib.crc32(a.encode()) % N_HASH] += 1.0
        hv[zlib.crc32((a + " " + b).encode()) % N_HASH] += 1.0
    return np.log1p(hv)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((N_HASH,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_GENRES, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run_loop(batch_fn):
    model = build_model()
    gaps, loss = [], None
    for ep in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batch_fn(ep, s)
            out = model.train_on_batch(x, y)
            loss = float(out[0] if isinstance(out, (list, tuple)) else out)
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return gaps, loss


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    labels = rng.integers(0, N_GENRES, N_CHAPTERS).astype(np.int32)
    chapters = [make_chapter(rng, int(g)) for g in labels]

    def python_batch(ep, s):
        idx = [(ep * STEPS * BATCH + s * BATCH + k) % N_CHAPTERS for k in range(BATCH)]
        return np.stack([featurise(chapters[j]) for j in idx]), labels[idx]

    gaps, loss = run_loop(python_batch)
    full = sec_per_step(gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[input_epubxhtml_trainonbatch_bookgenre] full run: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, loss {loss:.4f}")
    if args.truth:
        xb, yb = python_batch(0, 0)
        gaps2, _ = run_loop(lambda ep, s: (xb, yb))
        comp = sec_per_step(gaps2)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_epubxhtml_trainonbatch_bookgenre] truth: compute {comp*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
