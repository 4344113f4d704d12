"""Auction lot catalogues: lot descriptions -> log hammer price.

Catalogue shards (pipe-separated text, one lot per line) are written to a
temp dir. tf.data interleaves the shard paths (cycle_length=2, no parallel
calls); each shard is read and parsed by tf.py_function (tokenise, hash word
unigrams/bigrams and character trigrams into buckets, parse estimates and
condition grades), unbatched, batched -> model.fit.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import re
import random
import shutil
import tempfile
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 64
STEPS = 250
EPOCHS = 3
N_SHARDS = 16
LOTS_PER_SHARD = 320
BUCKETS = 2048
N_NUM = 6
GRADES = {"P": 0, "G": 1, "VG": 2, "F": 3, "VF": 4, "XF": 5, "AU": 6, "UNC": 7, "GEM": 8}
ITEMS = ["Inverted Jenny 24c", "Penny Black plate 11", "Mauritius Post Office 2d",
         "Morgan dollar 1893-S", "Buffalo nickel 1937-D three-legged", "Lincoln cent 1909-S VDB",
         "Zeppelin set C13-15", "Treskilling yellow", "Hawaiian Missionary 2c",
         "Gold sovereign 1917 Canada", "Trade dollar 1878-CC", "Basel Dove",
         "Large cent 1799", "Seated Liberty quarter 1873 arrows", "Graf Zeppelin cover"]
EXTRAS = ["original gum", "never hinged", "lightly hinged", "certificate PF", "PSE graded",
          "PCGS slab", "NGC slab", "small thin", "toned", "reperforated", "ex Ferrary",
          "ex Caspary", "provenance noted", "centred well", "straight edge", "plate number single",
          "cleaned", "rim nick", "proof-like", "full bands", "cameo", "pen cancel"]
LOT_RE = re.compile(r"^LOT (\d+) \| (.+?) \| Est\. \$(\d+)-(\d+) \| Cond: (\w+) \| (.*)$")
TOKEN_RE = re.compile(r"[a-z0-9]+")


def write_catalogue(root):
    rng = random.Random(1840)
    paths = []
    lot = 1
    for s in range(N_SHARDS):
        p = os.path.join(root, f"catalogue_{s:03d}.txt")
        with open(p, "w") as fh:
            for _ in range(LOTS_PER_SHARD):
                item = rng.choice(ITEMS)
                grade = rng.choice(list(GRADES))
                base = 50 * (1 + ITEMS.index(item)) * (1 + GRADES[grade]) ** 1.3
                lo = int(base * rng.uniform(0.7, 1.0))
                hi = int(lo * rng.uniform(1.2, 1.6))
                extras = ", ".join(rng.sample(EXTRAS, rng.randint(8, 14)))
                hammer = base * rng.lognormvariate(0.0, 0.25)
                fh.write(f"LOT {lot} | {item} | Est. ${lo}-{hi} | Cond: {grade} | "
                         f"{extras}; realised {hammer:.0f}\n")
                lot += 1
        paths.append(p)
    return paths


def parse_shard(path):
    path = path.numpy().decode() if hasattr(path, "numpy") else path
    feats, targets = [], []
    with open(path) as fh:
        for line in fh:
            m = LOT_RE.match(line.strip())
            if not m:
                continue
            _, item, lo, hi, grade, rest = m.groups()
            desc, _, realised = rest.rpartition("; realised ")
            vec = np.zeros(BUCKETS + N_NUM, np.float32)
            text = (item + " " + desc).lower()
            toks = TOKEN_RE.findall(text)
            for t in toks:
                vec[zlib.crc32(t.encode()) % BUCKETS] += 1.0
            for a, b in zip(toks, toks[1:]):
                vec[zlib.crc32((a + "_" + b).encode()) % BUCKETS] += 0.5
            for n in (2, 3, 4, 5, 6):
                for i in range(len(text) - n + 1):
                    vec[zlib.crc32(text[i:i + n].encode()) % BUCKETS] += 0.1
            lo_f, hi_f = float(lo), float(hi)
            vec[BUCKETS:] = [np.log1p(lo_f), np.log1p(hi_f), (hi_f - lo_f) / hi_f,
                             GRADES.get(grade, 0) / 8.0, len(toks) / 30.0,
                             1.0 if "slab" in desc else 0.0]
            feats.append(vec)
            targets.append(np.log1p(float(realised)))
    return np.stack(feats), np.asarray(targets, np.float32)[:, None]


def make_dataset(paths):
    ds = tf.data.Dataset.from_tensor_slices(paths).repeat()

    def read_shard(p):
        x, y = tf.py_function(parse_shard, [p], (tf.float32, tf.float32))
        x.set_shape((None, BUCKETS + N_NUM))
        y.set_shape((None, 1))
        return tf.data.Dataset.from_tensor_slices((x, y))

    ds = ds.interleave(read_shard, cycle_length=2, block_length=16)
    return ds.batch(BATCH)


def build_model():
    inp = keras.Input((BUCKETS + N_NUM,))
    x = layers.Dense(512, activation="relu")(inp)
    x = layers.Dropout(0.2)(x)
    x = layers.Dense(512, activation="relu")(x)
    x = layers.Dense(256, activation="relu")(x)
    out = layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(5e-4), loss="mse", metrics=["mae"])
    return model


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
        g = self.gaps[5:]
        return sum(g) / len(g)


def train(dataset):
    keras.utils.set_random_seed(5)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    root = tempfile.mkdtemp(prefix="u80_input_shardweave_auctionlots_")
    try:
        paths = write_catalogue(root)
        full, hist = train(make_dataset(paths))
        emit({"steps_per_second": 1.0 / full})
        print(f"[auctionlots] normal run: {full * 1000:.1f} ms/step, "
              f"loss {hist['loss'][-1]:.3f}, mae {hist['mae'][-1]:.3f}, "
              f"wall so far {time.perf_counter() - T0:.1f} s")
        if TRUTH:
            xb, yb = next(iter(make_dataset(paths)))
            fixed = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            compute, _ = train(fixed)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[auctionlots] truth: compute {compute * 1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
