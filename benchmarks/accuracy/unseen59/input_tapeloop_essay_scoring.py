"""Education: automated essay scoring from hashed word/char n-grams.

Data path: a custom tf.GradientTape loop (compiled train step) fed from
Python: for every batch the loop synthesises student essays, normalises
them (lower-casing, punctuation stripping with re), tokenises, and hashes
word uni/bi-grams and character 4-grams (stride 2) into a 4096-dim count vector plus
readability features (sentence length, type/token ratio).
Bottleneck: the Python tokenising/hashing that builds each batch (input).
"""
import time
WALL0 = time.perf_counter()
import json, os, re, sys, zlib
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, DIM = 32, 120, 4096
WORDS = ("the a student school learn because however therefore evidence argue paragraph teacher "
         "class history science reading important believe example conclusion community library "
         "homework project experiment result question answer idea research".split())


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def essay(rng):
    sents = []
    for _ in range(int(rng.integers(6, 14))):
        w = [WORDS[i] for i in rng.integers(0, len(WORDS), int(rng.integers(6, 20)))]
        w[0] = w[0].capitalize()
        sents.append(" ".join(w) + rng.choice([".", "!", "?", ", and so on."]))
    return " ".join(sents)


PUNCT = re.compile(r"[^a-z\s]")


def featurise(text):
    v = np.zeros(DIM + 3, np.float32)
    sents = [s for s in re.split(r"[.!?]+", text) if s.strip()]
    toks = PUNCT.sub(" ", text.lower()).split()
    for t in toks:
        v[zlib.crc32(t.encode()) % DIM] += 1
    for a, b in zip(toks, toks[1:]):
        v[zlib.crc32((a + "_" + b).encode()) % DIM] += 1
    flat = " ".join(toks)
    for i in range(0, len(flat) - 3, 2):
        v[zlib.crc32(flat[i:i + 4].encode()) % DIM] += 0.25
    v[DIM] = len(toks) / max(len(sents), 1) / 20.0
    v[DIM + 1] = len(set(toks)) / max(len(toks), 1)
    v[DIM + 2] = len(sents) / 14.0
    return v, np.float32(v[DIM + 1] * 4 + v[DIM] + (rng_bias(text)))


def rng_bias(text):
    return (zlib.crc32(text[:20].encode()) % 7) / 7.0


def batches(seed=59):
    rng = np.random.default_rng(seed)
    while True:
        xs = np.zeros((BATCH, DIM + 3), np.float32); ys = np.zeros((BATCH, 1), np.float32)
        for b in range(BATCH):
            xs[b], ys[b, 0] = featurise(essay(rng))
        yield xs, ys


def train(next_batch):
    keras.utils.set_random_seed(59)
    model = keras.Sequential([keras.Input((DIM + 3,)), keras.layers.Dense(1024, activation="relu"),
                              keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1)])
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    stamps = []
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


def main():
    it = batches()
    full, loss = train(lambda: next(it))
    emit({"steps_per_second": 1.0 / full})
    print("input_tapeloop_essay_scoring: %.4f s/step (%.1f steps/s), loss %.3f, wall %.1f s" % (full, 1 / full, loss, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        x, y = next(batches())
        comp, _ = train(lambda: (x, y))
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
