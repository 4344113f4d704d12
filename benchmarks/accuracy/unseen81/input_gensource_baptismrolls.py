"""Baptism-register transcriptions -> surname-cluster classifier.

Input path: a Python generator parses each transcribed baptism entry (regex),
fuzzy-matches the surname against canonical spellings (pure-Python Levenshtein),
hashes character trigrams, and is wrapped with tf.data.Dataset.from_generator
feeding model.fit.  Expected bottleneck: input (Python parsing per record).
"""
import time; T0 = time.perf_counter()
import os, sys, json, re, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 64, 85, 3
HASH_DIM = 256

CANON = ["Schmidt", "Hargreaves", "Whitworth", "Pennington", "Ashworth", "Kowalski",
         "Fitzgerald", "Gallagher", "Lindqvist", "Vanderbilt", "Macpherson", "Blackburne",
         "Thistlethwaite", "Oosterhuis", "Kirkpatrick", "Schoenberger"]
GIVEN = ["Johannes", "Maria", "Wilhelm", "Anna", "Thomas", "Elizabeth", "William", "Margaret",
         "Patrick", "Bridget", "Jan", "Catharina", "Hugh", "Isabella", "Jacob", "Sarah"]
PARISHES = ["St Lorenz", "St Mary le Bow", "Holy Trinity", "St Oswald", "Kilmore",
            "St Peter ad Vincula", "Sankt Jakobi", "St Mungo"]
ENTRY = re.compile(r"(\d{4})-(\d{2})-(\d{2}) bapt\. (\w+) (son|dau)\. of (\w+) ([\w']+) & (\w+), parish of ([\w ]+)")


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def lev(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def soundex(name):
    codes = {c: d for d, letters in {"1": "bfpv", "2": "cgjkqsxz", "3": "dt", "4": "l", "5": "mn", "6": "r"}.items() for c in letters}
    name = name.lower()
    out, last = name[0].upper(), codes.get(name[0], "")
    for c in name[1:]:
        d = codes.get(c, "")
        if d and d != last:
            out += d
        if c not in "hw":
            last = d
    return (out + "000")[:4]


def clerk_spelling(rng, name):
    s = list(name.lower())
    for _ in range(rng.randint(0, 3)):
        op = rng.random()
        k = rng.randrange(len(s))
        if op < 0.3:
            s.insert(k, s[k])                      # doubled letter
        elif op < 0.55 and len(s) > 4:
            del s[k]                               # dropped letter
        elif op < 0.8:
            s[k] = {"i": "y", "y": "i", "c": "k", "k": "c", "e": "a", "s": "z"}.get(s[k], s[k])
        else:
            s.append("e")
    return "".join(s).capitalize()


def baptism_entry(rng):
    label = rng.randrange(len(CANON))
    sur = clerk_spelling(rng, CANON[label])
    text = "%04d-%02d-%02d bapt. %s %s. of %s %s & %s, parish of %s" % (
        rng.randint(1690, 1880), rng.randint(1, 12), rng.randint(1, 28), rng.choice(GIVEN),
        rng.choice(["son", "dau"]), rng.choice(GIVEN), sur, rng.choice(GIVEN), rng.choice(PARISHES))
    return text, label


def featurize(text):
    m = ENTRY.match(text)
    year, month = int(m.group(1)), int(m.group(2))
    surname = m.group(7).lower()
    dists = [lev(surname, c.lower()) / max(len(c), len(surname)) for c in CANON]
    vec = np.zeros(HASH_DIM, np.float32)
    padded = "^" + text.lower() + "$"
    for i in range(len(padded) - 2):
        vec[zlib.crc32(padded[i:i + 3].encode()) % HASH_DIM] += 1.0
    vec[zlib.crc32(soundex(surname).encode()) % HASH_DIM] += 4.0
    vec /= max(1.0, vec.sum())
    return np.concatenate([np.array(dists, np.float32), vec,
                           np.array([(year - 1780) / 100.0, month / 12.0], np.float32)])


NFEAT = len(CANON) + HASH_DIM + 2


def baptism_records():
    rng = random.Random(81)
    while True:
        text, label = baptism_entry(rng)
        yield featurize(text), label


def make_dataset():
    return tf.data.Dataset.from_generator(
        baptism_records,
        output_signature=(tf.TensorSpec((NFEAT,), tf.float32), tf.TensorSpec((), tf.int32))).batch(BATCH)


def build_model():
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(len(CANON)),
    ])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


keras.utils.set_random_seed(81)
full, hist = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print("baptismrolls: %.1f ms/step, acc %.3f, wall so far %.1f s" % (full * 1e3, hist["accuracy"][-1], time.perf_counter() - T0))
if TRUTH:
    batch = next(iter(make_dataset()))
    compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("baptismrolls truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
