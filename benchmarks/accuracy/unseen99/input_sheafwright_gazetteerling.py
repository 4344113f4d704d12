import time; T0 = time.perf_counter()
"""Gazetteer place-name classifier fed by a keras.utils.PyDataset.

Each batch is assembled in __getitem__ from synthetic gazetteer lines
("name;feature;lat;lon;elev;county").  The name is fuzzy-matched (Levenshtein
distance, pure Python) against a list of canonical gazetteer headwords and
hashed into character trigrams; the network predicts the feature type
(settlement, hill, river, bay, wood, moor).
"""
import json
import os
import random
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 32
STEPS = 150
EPOCHS = 3
HASH_DIM = 256
N_CANON = 40

SYLL = ["ash", "by", "thorp", "wick", "ham", "ton", "ley", "combe", "ford",
        "mere", "fell", "pen", "tor", "caer", "aber", "dale", "holm", "ness",
        "strath", "kirk", "bourne", "brook", "wold", "fen", "moss"]
FEATURES = ["settlement", "hill", "river", "bay", "wood", "moor"]
COUNTIES = ["Westmoor", "Lowfield", "Harrowshire", "Coldmarsh", "Ridgeland"]


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


def levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def make_name(rng):
    return "".join(rng.choice(SYLL) for _ in range(rng.randint(2, 3))).capitalize()


CANON = [make_name(random.Random(1000 + k)) for k in range(N_CANON)]


def gazetteer_line(rng):
    feat = rng.randrange(len(FEATURES))
    name = make_name(rng)
    if feat == 1:
        name += " Pike"
    elif feat == 2:
        name = "River " + name
    elif feat == 3:
        name += " Bay"
    lat = 50.0 + rng.random() * 8.0
    lon = -6.0 + rng.random() * 7.0
    elev = rng.gauss(300 if feat in (1, 5) else 60, 40)
    return f"{name};{FEATURES[feat]};{lat:.5f};{lon:.5f};{elev:.1f};{rng.choice(COUNTIES)}"


class GazetteerBatches(keras.utils.PyDataset):
    def __init__(self, seed, **kwargs):
        super().__init__(workers=1, use_multiprocessing=False, **kwargs)
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        rng = random.Random(self.seed * 100003 + idx)
        x = np.zeros((BATCH, HASH_DIM + N_CANON + 3), np.float32)
        y = np.zeros((BATCH,), np.int32)
        for k in range(BATCH):
            name, feat, lat, lon, elev, _county = gazetteer_line(rng).split(";")
            key = "^" + name.lower() + "$"
            for p in range(len(key) - 2):
                x[k, zlib.crc32(key[p:p + 3].encode()) % HASH_DIM] += 1.0
            low = name.lower()
            for c, canon in enumerate(CANON):
                x[k, HASH_DIM + c] = levenshtein(low, canon.lower()) / 10.0
            x[k, -3] = (float(lat) - 54.0) / 4.0
            x[k, -2] = (float(lon) + 2.5) / 3.5
            x[k, -1] = float(elev) / 300.0
            y[k] = FEATURES.index(feat)
        return x, y


def build_model():
    keras.utils.set_random_seed(3)
    model = keras.Sequential([
        keras.Input((HASH_DIM + N_CANON + 3,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(len(FEATURES)),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(data):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(GazetteerBatches(seed=21))
emit({"steps_per_second": 1.0 / full})
print(f"gazetteerling: PyDataset run {full * 1000:.1f} ms/step, "
      f"{1.0 / full:.1f} steps/s, wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    bx, by = GazetteerBatches(seed=77)[0]
    compute = train(tf.data.Dataset.from_tensors((bx, by)).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"gazetteerling: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
