"""Typesetting: predict the paragraph badness class of a justified paragraph.

Bottleneck (input): a tf.data map calls tf.numpy_function per paragraph; the Python
function builds the paragraph text, hyphenates every word with Liang-style patterns
and runs a greedy line breaker, emitting per-line width/penalty features. The model
is a small Conv1D network over the line sequence.
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


BATCH = 64
LINES = 48
LFEAT = 8
STEPS = 20
EPOCHS = 3
WORDS_PER_PARA = 40      # Python load knob
MEASURE = 60.0            # line width in character units

SYL = ["ta", "pro", "gra", "phy", "com", "po", "si", "tion", "lin", "guis", "tic", "ar",
       "chi", "val", "man", "u", "script", "trans", "la", "tor", "edi", "to", "ri", "al"]
PATTERNS = {"ti": 1, "on": 2, "si": 1, "al": 2, "ra": 1, "phy": 3, "gui": 1, "to": 2,
            "pro": 1, "com": 2, "man": 1, "ript": 3, "ns": 1, "la": 1}


def liang_points(word):
    w = "." + word + "."
    pts = [0] * (len(w) + 1)
    for i in range(len(w)):
        for j in range(i + 2, min(len(w), i + 5) + 1):
            v = PATTERNS.get(w[i:j])
            if v:
                k = i + (j - i) // 2
                pts[k] = max(pts[k], v)
    return [i - 1 for i in range(2, len(w) - 2) if pts[i] % 2 == 1]


def typeset(seed):
    rng = np.random.default_rng(int(seed))
    n_syl = rng.integers(1, 6, size=WORDS_PER_PARA)
    syl = rng.integers(len(SYL), size=int(n_syl.sum()))
    ends = np.cumsum(n_syl)
    words = ["".join(SYL[k] for k in syl[e - n:e]) for e, n in zip(ends, n_syl)]
    stretch = rng.uniform(0.9, 1.1, size=WORDS_PER_PARA)
    lines, cur, hyphens = [], 0.0, 0
    for w, st in zip(words, stretch):
        wl = len(w) * st
        if cur + wl + 1 <= MEASURE:
            cur += wl + 1
            continue
        brk = [p for p in liang_points(w) if cur + p + 2 <= MEASURE]
        if brk:
            lines.append((cur + brk[-1] + 1, 1.0))
            hyphens += 1
            cur = wl - brk[-1] + 1
        else:
            lines.append((cur, 0.0))
            cur = wl + 1
    lines.append((cur, 0.0))
    feats = np.zeros((LINES, LFEAT), np.float32)
    badness = 0.0
    for i, (width, hyph) in enumerate(lines[:LINES]):
        slack = (MEASURE - width) / MEASURE
        bad = 100.0 * slack ** 3
        badness += bad if i < len(lines) - 1 else 0.0
        feats[i] = [width / MEASURE, slack, bad / 100.0, hyph, i / LINES,
                    float(i == len(lines) - 1), hyphens / 20.0, len(lines) / LINES]
    label = np.int32(min(3, int(badness / 60.0)))
    return feats, label


def parse(seed):
    f, l = tf.numpy_function(typeset, [seed], [tf.float32, tf.int32])
    f.set_shape((LINES, LFEAT))
    l.set_shape(())
    return f, l


def full_dataset():
    return tf.data.Dataset.range(10 ** 7).map(parse).batch(BATCH)


def build_model():
    m = keras.Sequential([keras.Input((LINES, LFEAT)),
                          keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
                          keras.layers.Conv1D(128, 5, padding="same", activation="relu"),
                          keras.layers.GlobalMaxPooling1D(),
                          keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(4)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


full = run(full_dataset())
compute = None
if ARGS.truth:
    batch = next(iter(full_dataset()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
finish(full, compute)
