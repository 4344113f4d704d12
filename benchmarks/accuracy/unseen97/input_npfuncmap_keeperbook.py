import time; T0 = time.perf_counter()
import os
import sys
import json
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
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

# Keeper log-book text entries: free-text watch entries ("0400 wind SW 6 vis 2nm
# lamp ok, fog signal on 35 min ...").  tf.data maps each entry through
# tf.numpy_function (serial, no parallel calls): a Python parser extracts wind,
# visibility, durations and hashes word/char n-grams into a bag-of-features vector.
# Label: entry category (routine, fog event, lamp fault, storm damage, vessel report, supply).

import re
import zlib

BATCH = 96
STEPS_PER_EPOCH = 75
EPOCHS = 4
N_ENTRIES = 4000
HASH_DIM = 2048
N_CLASS = 6
CHAR_NGRAMS = (4, 5)

WORDS = {
    0: ["routine", "watch", "wound", "clockwork", "trimmed", "wick", "polished", "brass", "lens", "clean"],
    1: ["fog", "signal", "sounded", "horn", "visibility", "poor", "thick", "bank", "mist", "obscured"],
    2: ["lamp", "fault", "mantle", "broken", "rotation", "stopped", "bearing", "mercury", "bath", "relit"],
    3: ["gale", "storm", "shutter", "damaged", "glazing", "cracked", "spray", "gallery", "railing", "torn"],
    4: ["vessel", "steamer", "schooner", "passed", "signalled", "flag", "bearing", "inbound", "trawler", "aground"],
    5: ["supply", "boat", "oil", "delivered", "casks", "coal", "provisions", "tender", "landed", "stores"],
}
DIRS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]


def make_entries():
    rng = np.random.default_rng(97)
    texts, labels = [], []
    for _ in range(N_ENTRIES):
        c = int(rng.integers(N_CLASS))
        words = [WORDS[c][int(i)] for i in rng.integers(0, 10, size=int(rng.integers(18, 40)))]
        words += [WORDS[int(rng.integers(N_CLASS))][int(rng.integers(10))] for _ in range(6)]
        rng.shuffle(words)
        hh = int(rng.integers(0, 24))
        txt = (f"{hh:02d}{int(rng.integers(0, 60)):02d} wind {DIRS[int(rng.integers(8))]} {int(rng.integers(0, 12))} "
               f"vis {rng.uniform(0.1, 20):.1f}nm baro {rng.uniform(960, 1040):.0f}mb " + " ".join(words) +
               f" duration {int(rng.integers(1, 240))} min keeper {'ABCDEFG'[int(rng.integers(7))]}.")
        texts.append(txt)
        labels.append(c)
    return np.array(texts, dtype=object), np.array(labels, np.int32)


WIND_RE = re.compile(r"wind\s+([NESW]{1,2})\s+(\d+)")
VIS_RE = re.compile(r"vis\s+([\d.]+)nm")
BARO_RE = re.compile(r"baro\s+(\d+)mb")
DUR_RE = re.compile(r"duration\s+(\d+)\s+min")


def parse_entry(raw):
    text = raw.decode("utf-8").lower()
    vec = np.zeros(HASH_DIM, np.float32)
    toks = re.findall(r"[a-z]+", text)
    for i, tok in enumerate(toks):
        vec[zlib.crc32(tok.encode()) % (HASH_DIM - 16)] += 1.0
        if i:
            vec[zlib.crc32((toks[i - 1] + "_" + tok).encode()) % (HASH_DIM - 16)] += 0.5
    for n in CHAR_NGRAMS:
        for j in range(len(text) - n + 1):
            vec[zlib.crc32(text[j:j + n].encode()) % (HASH_DIM - 16)] += 0.1
    m = WIND_RE.search(text.upper().replace("WIND", "wind"))
    if m:
        vec[HASH_DIM - 16 + DIRS.index(m.group(1))] = 1.0
        vec[HASH_DIM - 8] = float(m.group(2)) / 12.0
    m = VIS_RE.search(text)
    vec[HASH_DIM - 7] = float(m.group(1)) / 20.0 if m else 0.0
    m = BARO_RE.search(text)
    vec[HASH_DIM - 6] = (float(m.group(1)) - 1000.0) / 40.0 if m else 0.0
    m = DUR_RE.search(text)
    vec[HASH_DIM - 5] = float(m.group(1)) / 240.0 if m else 0.0
    vec[: HASH_DIM - 16] = np.log1p(vec[: HASH_DIM - 16])
    return vec


def tf_parse(text, label):
    vec = tf.numpy_function(parse_entry, [text], tf.float32)
    vec.set_shape((HASH_DIM,))
    return vec, label


def make_dataset(texts, labels):
    ds = tf.data.Dataset.from_tensor_slices((texts.astype(str), labels))
    ds = ds.shuffle(N_ENTRIES, seed=3).repeat()
    ds = ds.map(tf_parse)  # serial: no num_parallel_calls
    return ds.batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(3)
    inp = keras.Input((HASH_DIM,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(N_CLASS)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(5e-4),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


texts, labels = make_entries()
full = train(make_dataset(texts, labels))
emit({"steps_per_second": 1.0 / full})
print(f"[keeperbook] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    one = next(iter(make_dataset(texts, labels)))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[keeperbook] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
