import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Plant-nursery pot labels: free-text label strings (SKU, botanical name,
# cultivar, pot size, price) are parsed with regular expressions and hashed
# into character n-gram features in Python, then fed to model.train_on_batch.
import re
import zlib as _z

BATCH = 64
STEPS = 850
N_LAB = 4096
HASH_DIM = 1024
CLASSES = 6  # pot-size class

rng = np.random.default_rng(78)
GENERA = ["Acer", "Rosa", "Hosta", "Salvia", "Lavandula", "Camellia", "Hydrangea", "Buxus", "Ilex", "Pieris"]
SPECIES = ["japonicum", "officinalis", "macrophylla", "sempervirens", "angustifolia", "sieboldiana", "rubra"]
POTS = ["P9", "1L", "2L", "3L", "5L", "10L"]
LABEL_RE = re.compile(r"SKU-(\d+)\|(\w+) (\w+) '([^']+)'\|pot (\w+)\|EUR (\d+)\.(\d\d)\|batch (\w+)")
Y = rng.integers(CLASSES, size=N_LAB).astype(np.int32)
TEXT = []
for i in range(N_LAB):
    cv = "".join(chr(97 + c) for c in rng.integers(0, 26, 8)).title()
    TEXT.append(f"SKU-{100000 + i}|{GENERA[i % 10]} {SPECIES[i % 7]} '{cv} {POTS[Y[i]]}'|pot {POTS[Y[i]]}"
                f"|EUR {int(rng.integers(2, 80))}.{int(rng.integers(0, 100)):02d}|batch W{i % 52:02d}")


def featurise(label):
    m = LABEL_RE.match(label)
    sku, genus, species, cultivar, pot, eur, cent, batch = m.groups()
    v = np.zeros(HASH_DIM, np.float32)
    text = f"{genus.lower()} {species} {cultivar.lower()} {pot.lower()}"
    for n in (2, 3, 4, 5):
        for k in range(len(text) - n + 1):
            v[_z.crc32(text[k:k + n].encode()) % HASH_DIM] += 1.0
    v[0] = float(eur) + float(cent) / 100.0
    return v / (np.linalg.norm(v) + 1e-6)


def python_batches(seed):
    r = np.random.default_rng(seed)
    while True:
        ids = r.integers(0, N_LAB, BATCH)
        yield np.stack([featurise(TEXT[i]) for i in ids]), Y[ids]


def build():
    m = keras.Sequential([keras.Input((HASH_DIM,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(batches):
    keras.utils.set_random_seed(78)
    model = build()
    stamps = []
    for _ in range(STEPS):
        x, y = next(batches)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:]))


full = run(python_batches(1))
emit({"steps_per_second": 1.0 / full})
print(f"[input_trainonbatch_potlabel] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    xb, yb = next(python_batches(2))

    def same():
        while True:
            yield xb, yb
    comp = run(same())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[input_trainonbatch_potlabel] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
