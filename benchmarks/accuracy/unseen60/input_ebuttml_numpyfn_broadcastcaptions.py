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
# Broadcast caption programme classification: each tf.data element is an
# EBU-TT-D style XML caption document (bytes). A tf.numpy_function inside
# Dataset.map parses it with xml.etree.ElementTree, converts begin/end clock
# times, computes reading speed statistics and hashes caption words into a
# bag-of-words vector. model.fit trains an MLP on the parsed vectors.
# ---------------------------------------------------------------------------
import xml.etree.ElementTree as ET
import zlib

SEED = 60
N_DOCS = 600
N_CUES = 80
N_HASH = 512
N_PROGRAMMES = 6
BATCH = 32
STEPS = 40
EPOCHS = 2
TT = "http://www.w3.org/ns/ttml"
VOCAB = [["goal", "match", "league", "score", "penalty", "coach"],
         ["weather", "rain", "storm", "forecast", "sunny", "wind"],
         ["minister", "vote", "election", "policy", "debate", "budget"],
         ["recipe", "oven", "butter", "sauce", "bake", "flour"],
         ["planet", "species", "forest", "ocean", "migration", "habitat"],
         ["detective", "murder", "alibi", "suspect", "witness", "case"]]
COMMON = ["the", "and", "we", "now", "here", "today", "this", "is", "a", "of", "to", "with"]


def clock(sec):
    h, rem = divmod(sec, 3600)
    m, s = divmod(rem, 60)
    return "%02d:%02d:%06.3f" % (h, m, s)


def make_doc(rng, prog):
    t = 0.0
    ps = []
    for i in range(N_CUES):
        dur = float(rng.uniform(1.0, 4.0))
        words = list(rng.choice(COMMON, 6)) + list(rng.choice(VOCAB[prog], 2)) + \
            list(rng.choice(VOCAB[int(rng.integers(0, N_PROGRAMMES))], 1))
        rng.shuffle(words)
        colour = "#FFFF00" if rng.random() < 0.2 else "#FFFFFF"
        ps.append('<p xml:id="c%d" begin="%s" end="%s" region="r%d"><span tts:color="%s">%s</span>'
                  '<br/><span>%s</span></p>' % (i, clock(t), clock(t + dur), i % 2, colour,
                                                 " ".join(words[:5]), " ".join(words[5:])))
        t += dur + float(rng.uniform(0.0, 0.5))
    doc = ('<?xml version="1.0" encoding="UTF-8"?><tt xmlns="%s" '
           'xmlns:tts="http://www.w3.org/ns/ttml#styling" xml:lang="en"><head><styling/>'
           '<layout><region xml:id="r0"/><region xml:id="r1"/></layout></head><body><div>%s'
           '</div></body></tt>' % (TT, "".join(ps)))
    return doc.encode("utf-8")


def to_sec(s):
    h, m, rest = s.split(":")
    return int(h) * 3600 + int(m) * 60 + float(rest)


def parse_doc(raw):
    root = ET.fromstring(bytes(raw))
    hv = np.zeros(N_HASH, np.float32)
    speeds, gaps, colours = [], [], 0
    last_end = None
    for p in root.iter("{%s}p" % TT):
        b, e = to_sec(p.get("begin")), to_sec(p.get("end"))
        text = " ".join(t.strip() for t in p.itertext())
        speeds.append(len(text) / max(e - b, 1e-3))
        if last_end is not None:
            gaps.append(b - last_end)
        last_end = e
        for span in p:
            if span.get("{http://www.w3.org/ns/ttml#styling}color", "#FFFFFF") != "#FFFFFF":
                colours += 1
        for w in text.lower().split():
            hv[zlib.crc32(w.encode()) % N_HASH] += 1.0
            hv[zlib.crc32(w[:3].encode()) % N_HASH] += 0.5
    stats = [np.mean(speeds) / 30.0, np.std(speeds) / 30.0, np.mean(gaps), colours / N_CUES]
    return np.concatenate([np.log1p(hv), np.asarray(stats, np.float32)]).astype(np.float32)


FEAT = N_HASH + 4


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_PROGRAMMES, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    labels = rng.integers(0, N_PROGRAMMES, N_DOCS).astype(np.int32)
    docs = [make_doc(rng, int(g)) for g in labels]

    def parse_tf(raw, y):
        x = tf.numpy_function(parse_doc, [raw], tf.float32)
        x.set_shape((FEAT,))
        return x, y

    ds = (tf.data.Dataset.from_tensor_slices((docs, labels)).repeat()
          .map(parse_tf, num_parallel_calls=1).batch(BATCH).prefetch(2))
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = sec_per_step(timer.gaps)
    emit({"steps_per_second": 1.0 / full})
    print(f"[input_ebuttml_numpyfn_broadcastcaptions] full run: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, {len(timer.gaps)} gaps")
    if args.truth:
        xb = np.stack([parse_doc(docs[j]) for j in range(BATCH)])
        one = tf.data.Dataset.from_tensors((xb, labels[:BATCH])).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = sec_per_step(timer2.gaps)
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_ebuttml_numpyfn_broadcastcaptions] truth: compute {comp*1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
