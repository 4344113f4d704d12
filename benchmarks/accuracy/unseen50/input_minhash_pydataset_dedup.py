"""Near-duplicate detection for a web-crawl deduplication stage (pairs of pages).
Synthetic page texts are generated in memory; a keras.utils.PyDataset builds each batch in
Python by word-3-gram shingling both pages of a pair, hashing shingles with zlib.crc32 and
computing 128-permutation MinHash signatures with numpy. The signature agreement vector plus
length statistics feed an MLP via model.fit.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 50
N_DOCS = 1500
N_PERM = 128
SHINGLE = 3
BATCH = 32
STEPS = 50
EPOCHS = 2
PRIME = (1 << 61) - 1
N_FEAT = N_PERM + 4


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_corpus(rng):
    vocab = ["w%d" % i for i in range(5000)]
    docs = []
    for _ in range(N_DOCS):
        n = int(rng.integers(250, 450))
        docs.append(" ".join(vocab[k] for k in rng.zipf(1.3, n) % 5000))
    return docs


def perturb(text, rng, rate):
    words = text.split()
    for _ in range(int(len(words) * rate)):
        words[int(rng.integers(len(words)))] = "w%d" % int(rng.integers(5000))
    return " ".join(words)


class PairBatches(keras.utils.PyDataset):
    def __init__(self, docs, steps, seed):
        super().__init__()
        self.docs = docs
        self.steps = steps
        self.seed = seed
        prng = np.random.default_rng(SEED + 1)
        self.a = prng.integers(1, PRIME, N_PERM, dtype=np.uint64)
        self.b = prng.integers(0, PRIME, N_PERM, dtype=np.uint64)

    def __len__(self):
        return self.steps

    def signature(self, text):
        words = text.lower().split()
        shingles = {" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}
        hashes = np.fromiter((zlib.crc32(s.encode("utf-8")) for s in shingles), np.uint64, len(shingles))
        sig = np.full(N_PERM, np.iinfo(np.uint64).max, np.uint64)
        for h in hashes:
            sig = np.minimum(sig, (self.a * h + self.b) % PRIME)
        return sig, len(shingles)

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        x = np.zeros((BATCH, N_FEAT), np.float32)
        y = np.zeros((BATCH,), np.float32)
        for k in range(BATCH):
            i = int(rng.integers(len(self.docs)))
            dup = k % 2 == 0
            other = perturb(self.docs[i], rng, 0.08) if dup else self.docs[int(rng.integers(len(self.docs)))]
            s1, n1 = self.signature(self.docs[i])
            s2, n2 = self.signature(other)
            x[k, :N_PERM] = (s1 == s2)
            x[k, N_PERM:] = [n1 / 500, n2 / 500, abs(n1 - n2) / 500, (s1 == s2).mean()]
            y[k] = float(dup)
        return x, y


def make_model():
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(2048, activation="relu")(inp)
    x = keras.layers.Dense(2048, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_input_minhash_pydataset_dedup_")
    try:
        docs = make_corpus(np.random.default_rng(SEED))
        data = PairBatches(docs, STEPS, SEED)
        model = make_model()
        timer = StepTimer()
        hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = data[0]
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = make_model()
            timer2 = StepTimer()
            model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"input_minhash_pydataset_dedup: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
