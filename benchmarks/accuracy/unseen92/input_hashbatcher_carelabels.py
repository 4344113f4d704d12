import time; T0 = time.perf_counter()
# Garment care-label text -> multi-label care instructions (wash temp, no tumble,
# dry-clean only, ...). A keras.utils.PyDataset (workers=1) assembles label
# strings, normalises them and hashes character trigrams + words in Python.
import os
import sys
import json
import re
import zlib
import random

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


BATCH = 48
STEPS = 80
EPOCHS = 3
N_HASH = 4096
CARE = ["machine_wash_30", "machine_wash_40", "hand_wash", "no_tumble", "dry_clean_only",
        "no_bleach", "iron_low", "line_dry"]
FIBRES = ["cotton", "polyester", "wool", "silk", "viscose", "elastane", "linen", "nylon", "cashmere"]
PHRASES = {
    0: ["machine wash 30C", "wash at 30 degrees", "MACHINE WASH COLD 30°C gentle cycle"],
    1: ["machine wash 40C", "wash warm 40 deg", "Machine wash at 40°C normal"],
    2: ["hand wash only", "HAND WASH cold water", "gentle hand wash, do not wring"],
    3: ["do not tumble dry", "DO NOT TUMBLE DRY", "no tumble dryer"],
    4: ["dry clean only", "professional dry clean P", "Dry-clean only, any solvent except trichloroethylene"],
    5: ["do not bleach", "non-chlorine bleach only", "NO BLEACH"],
    6: ["iron low heat", "cool iron max 110C", "iron on reverse, low setting"],
    7: ["line dry in shade", "dry flat", "hang to dry, reshape while damp"],
}


# care labels are printed in several languages; crude word-level "translations"
LANGS = [
    {},
    {"wash": "waschen", "dry": "trocknen", "do": "", "not": "nicht", "iron": "bugeln", "only": "nur", "cold": "kalt", "hand": "hand", "clean": "reinigung"},
    {"wash": "laver", "dry": "secher", "do": "ne", "not": "pas", "iron": "repasser", "only": "uniquement", "cold": "froid", "hand": "main", "clean": "nettoyage"},
    {"wash": "lavare", "dry": "asciugare", "do": "non", "not": "", "iron": "stirare", "only": "solo", "cold": "freddo", "hand": "mano", "clean": "secco"},
    {"wash": "lavar", "dry": "secar", "do": "no", "not": "", "iron": "planchar", "only": "solo", "cold": "frio", "hand": "mano", "clean": "limpieza"},
    {"wash": "wassen", "dry": "drogen", "do": "niet", "not": "", "iron": "strijken", "only": "alleen", "cold": "koud", "hand": "hand", "clean": "stomen"},
]


def translate(text, lang):
    return " ".join(lang.get(w.lower(), w) for w in text.split(" "))


def make_label(rnd):
    k = rnd.randint(2, 5)
    idx = rnd.sample(range(len(CARE)), k)
    fib = rnd.sample(FIBRES, rnd.randint(1, 3))
    pct = sorted([rnd.randint(5, 90) for _ in fib], reverse=True)
    parts = [f"{p}% {f}" for p, f in zip(pct, fib)]
    parts += [rnd.choice(PHRASES[i]) for i in idx]
    parts.append(f"RN {rnd.randint(10000, 99999)} Made in {rnd.choice(['PT', 'BD', 'VN', 'IT', 'TR'])}")
    rnd.shuffle(parts)
    base = " / ".join(parts)
    return " || ".join(translate(base, lang) for lang in LANGS), idx


_clean = re.compile(r"[^a-z0-9% ]+")


def encode(text):
    v = np.zeros(N_HASH, dtype=np.float32)
    t = " " + _clean.sub(" ", text.lower().replace("°", " deg ")) + " "
    t = re.sub(r"\s+", " ", t)
    for i in range(len(t) - 2):
        v[zlib.crc32(t[i:i + 3].encode()) % N_HASH] += 1.0
    for i in range(len(t) - 3):
        v[zlib.crc32(t[i:i + 4].encode()) % N_HASH] += 0.5
    words = t.split()
    for i in range(len(t) - 4):
        v[zlib.crc32(t[i:i + 5].encode()) % N_HASH] += 0.25
    for w in words:
        v[zlib.crc32(("w:" + w).encode()) % N_HASH] += 1.0
    for a, b in zip(words, words[1:]):
        v[zlib.crc32(("b:" + a + "_" + b).encode()) % N_HASH] += 1.0
    return np.log1p(v)


class CareLabelBatches(keras.utils.PyDataset):
    def __init__(self, seed, **kw):
        super().__init__(workers=1, use_multiprocessing=False, **kw)
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, i):
        rnd = random.Random(self.seed * 100003 + i)
        x = np.zeros((BATCH, N_HASH), dtype=np.float32)
        y = np.zeros((BATCH, len(CARE)), dtype=np.float32)
        for j in range(BATCH):
            text, idx = make_label(rnd)
            x[j] = encode(text)
            y[j, idx] = 1.0
        return x, y


def make_model():
    inp = keras.Input(shape=(N_HASH,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(len(CARE), activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["binary_accuracy"])
    return m


def train(data):
    keras.utils.set_random_seed(3)
    model = make_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


full = train(CareLabelBatches(seed=5))
emit({"steps_per_second": 1.0 / full})
print(f"[carelabels] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    one = CareLabelBatches(seed=5)[0]
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[carelabels] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
