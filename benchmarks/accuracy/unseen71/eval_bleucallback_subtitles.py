"""Subtitle translation (monotone token-level en -> es subtitle lines) with a BLEU callback.

Bottleneck (eval): training is short, but a callback's on_epoch_end runs model.predict
on a large held-out subtitle set and scores it with a pure-Python corpus BLEU
(n-gram counting up to 4-grams), which dominates the process wall time.
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


import collections
import math

BATCH = 64
SEQ = 24
VOCAB = 500
N_TRAIN = 4096
N_VAL = 14000
STEPS = 10
EPOCHS = 3


def make_pairs(rng, n):
    src = rng.integers(1, VOCAB, size=(n, SEQ)).astype(np.int32)
    lens = rng.integers(6, SEQ, size=n)
    src[np.arange(SEQ)[None, :] >= lens[:, None]] = 0
    tgt = np.where(src > 0, (src * 7 + np.roll(src, 1, axis=1)) % (VOCAB - 1) + 1, 0).astype(np.int32)
    return src, tgt


def ngrams(seq, n):
    return collections.Counter(tuple(seq[i:i + n]) for i in range(len(seq) - n + 1))


def corpus_bleu(hyps, refs):
    match = [0] * 4
    total = [0] * 4
    hl = rl = 0
    for h, r in zip(hyps, refs):
        h = [t for t in h if t]
        r = [t for t in r if t]
        hl += len(h)
        rl += len(r)
        for n in range(1, 5):
            hc, rc = ngrams(h, n), ngrams(r, n)
            match[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            total[n - 1] += max(0, len(h) - n + 1)
    logp = sum(math.log(max(m, 1e-9) / max(t, 1)) for m, t in zip(match, total)) / 4
    bp = 1.0 if hl > rl else math.exp(1 - rl / max(hl, 1))
    return 100 * bp * math.exp(logp)


class BleuCallback(keras.callbacks.Callback):
    def __init__(self, src, tgt):
        super().__init__()
        self.src, self.tgt = src, tgt
        self.seconds = 0.0
        self.scores = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = np.argmax(self.model.predict(self.src, batch_size=512, verbose=0), axis=-1)
        pred = np.where(self.src > 0, pred, 0)
        self.scores.append(corpus_bleu(pred.tolist(), self.tgt.tolist()))
        self.seconds += time.perf_counter() - t


def build_model():
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, 64)(inp)
    h = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(h)
    m = keras.Model(inp, keras.layers.Dense(VOCAB)(h))
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds, bleu):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, bleu], verbose=0)
    return timer.sec_per_step()


rng = np.random.default_rng(71)
Xtr, Ytr = make_pairs(rng, N_TRAIN)
Xva, Yva = make_pairs(rng, N_VAL)
train_ds = tf.data.Dataset.from_tensor_slices((Xtr, Ytr)).shuffle(N_TRAIN, seed=71).batch(BATCH).repeat()
bleu_full = BleuCallback(Xva, Yva)
full = run(train_ds, bleu_full)
eval_s = bleu_full.seconds
compute = None
if ARGS.truth:
    bleu_truth = BleuCallback(Xva, Yva)
    compute = run(tf.data.Dataset.from_tensors(next(iter(train_ds))).repeat(), bleu_truth)
    eval_s += bleu_truth.seconds
wall = time.perf_counter() - WALL_T0
finish(full, compute, extra=f"eval_s={eval_s:.1f} eval_share_of_wall={eval_s / wall:.2f} bleu={bleu_full.scores[-1]:.2f}")
