"""Treebank part-of-speech tagging from CoNLL-U text (Universal Dependencies format).

Bottleneck (input): a custom tf.GradientTape loop is fed from plain Python: every step
renders a block of CoNLL-U sentences, splits the 10 tab-separated columns, parses the
FEATS column into dictionaries, hashes word forms and lemmas into ids and pads, before
calling a compiled train step on a small Conv1D tagger.
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


import zlib

BATCH = 64
SEQ = 40
VOCAB = 20000
STEPS = 60
UPOS = ["NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "PROPN", "NUM", "CCONJ", "PUNCT", "AUX"]
FEATS = ["Case=Nom", "Case=Acc", "Case=Gen", "Number=Sing", "Number=Plur", "Tense=Past",
         "Tense=Pres", "Gender=Fem", "Gender=Masc", "Mood=Ind", "Person=3", "Definite=Def"]
STEMS = ["lib", "arch", "transl", "gramm", "lex", "morph", "phon", "edit", "publ", "verb",
         "nomin", "script", "codex", "gloss", "dial", "synt"]
ENDINGS = ["a", "um", "is", "ibus", "os", "ae", "et", "unt", "ere", "or", "ium", "ens"]


def render_conllu(rng, n_sent):
    out = []
    for s in range(n_sent):
        n = int(rng.integers(8, SEQ))
        out.append(f"# sent_id = u71-{s}")
        tags = rng.integers(len(UPOS), size=n)
        stems = rng.integers(len(STEMS), size=n)
        ends = rng.integers(3, size=n)
        fk = rng.integers(len(FEATS), size=(n, 3))
        heads = rng.integers(0, 10 ** 6, size=n)
        for t in range(1, n + 1):
            tag = int(tags[t - 1])
            form = STEMS[stems[t - 1]] + ENDINGS[(tag * 3 + int(ends[t - 1])) % len(ENDINGS)]
            feats = "|".join(sorted(set(FEATS[k] for k in fk[t - 1])))
            head = 0 if t == 1 else 1 + int(heads[t - 1]) % (t - 1)
            out.append("\t".join([str(t), form, form[:-1], UPOS[tag], "_", feats, str(head),
                                  "root" if head == 0 else "dep", "_", "SpaceAfter=No"]))
        out.append("")
    return "\n".join(out)


def parse_conllu(text):
    sents, cur = [], []
    for line in text.split("\n"):
        if not line:
            if cur:
                sents.append(cur)
                cur = []
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        feats = dict(kv.split("=", 1) for kv in cols[5].split("|")) if cols[5] != "_" else {}
        cur.append((cols[1].lower(), cols[2].lower(), cols[3], feats, int(cols[6])))
    if cur:
        sents.append(cur)
    return sents


def to_arrays(sents):
    x = np.zeros((len(sents), SEQ, 2), np.int32)
    y = np.zeros((len(sents), SEQ), np.int32)
    w = np.zeros((len(sents), SEQ), np.float32)
    for i, s in enumerate(sents):
        for j, (form, lemma, upos, feats, head) in enumerate(s[:SEQ]):
            key = form + "|" + ",".join(f"{k}:{v}" for k, v in sorted(feats.items()))
            x[i, j, 0] = zlib.crc32(key.encode()) % VOCAB
            x[i, j, 1] = zlib.crc32(lemma.encode()) % VOCAB
            y[i, j] = UPOS.index(upos)
            w[i, j] = 1.0
    return x, y, w


def build_model():
    inp = keras.Input((SEQ, 2), dtype="int32")
    emb = keras.layers.Embedding(VOCAB, 64)(inp)
    h = keras.layers.Reshape((SEQ, 128))(emb)
    h = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(h)
    return keras.Model(inp, keras.layers.Dense(len(UPOS))(h))


def train(batches):
    """batches: a callable returning (x, y, w) for each step."""
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y, w):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True), sample_weight=w)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    stamps = []
    for i in range(STEPS):
        x, y, w = batches()
        _ = float(step(x, y, w))
        stamps.append(time.perf_counter())
    return mean_after_warmup(list(np.diff(stamps)))


rng = np.random.default_rng(71)
full = train(lambda: to_arrays(parse_conllu(render_conllu(rng, BATCH))))
compute = None
if ARGS.truth:
    fixed = to_arrays(parse_conllu(render_conllu(np.random.default_rng(72), BATCH)))
    compute = train(lambda: fixed)
finish(full, compute)
