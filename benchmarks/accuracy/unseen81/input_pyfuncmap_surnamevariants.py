"""Surname-variant clustering for a one-name study.

Input path: tf.data.Dataset.range(...) mapped (serially, no num_parallel_calls)
through tf.numpy_function.  Each element synthesises a clerk's spelling of a
surname, then computes Soundex, a NYSIIS-like key, a Levenshtein profile
against the study's registered variants and a character-bigram histogram.
Batches feed model.fit.  Expected bottleneck: input (Python in numpy_function).
"""
import time; T0 = time.perf_counter()
import os, sys, json, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 64, 70, 4

FAMILIES = {
    "Thistlethwaite": ["Thistlethwayte", "Thislethwaite", "Thistlewaite"],
    "Featherstonehaugh": ["Fetherstonhaugh", "Featherstonhalgh", "Fanshawe"],
    "Cholmondeley": ["Chumley", "Cholmondley", "Chomley"],
    "Wolstenholme": ["Woolstenholme", "Wolstenholm", "Wostenholme"],
    "Oosterhuis": ["Oosterhuys", "Osterhuis", "Oesterhuis"],
    "Schumacher": ["Schuhmacher", "Shoemaker", "Schumaker"],
    "Kowalczyk": ["Kowalczik", "Kovalchik", "Kowalchuk"],
    "MacGillivray": ["McGillivray", "MacGilvray", "McGilvery"],
}
CANON = list(FAMILIES)
VARIANTS = [v for k in CANON for v in [k, FAMILIES[k][0]]]
ALPHA = "abcdefghijklmnopqrstuvwxyz"
NFEAT = len(VARIANTS) + 26 * 26 + 8


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
    out, last = name[0].upper(), codes.get(name[0], "")
    for c in name[1:]:
        d = codes.get(c, "")
        if d and d != last:
            out += d
        if c not in "hw":
            last = d
    return (out + "000")[:4]


def nysiis_key(name):
    for a, b in (("mac", "mcc"), ("kn", "nn"), ("ph", "ff"), ("sch", "sss"), ("ee", "y"), ("ie", "y")):
        name = name.replace(a, b)
    key = name[0]
    for c in name[1:]:
        c = "a" if c in "aeiou" else c
        if c != key[-1]:
            key += c
    return key[:6]


def make_record(i):
    rng = random.Random(int(i) * 7919 + 81)
    fam = rng.randrange(len(CANON))
    name = list(rng.choice([CANON[fam]] + FAMILIES[CANON[fam]]).lower())
    for _ in range(rng.randint(0, 2)):
        k = rng.randrange(len(name))
        if rng.random() < 0.5:
            name[k] = rng.choice("aeiouyw")
        else:
            name.insert(k, name[k])
    name = "".join(c for c in name if c in ALPHA)
    prof = np.array([lev(name, v.lower()) / max(len(name), len(v)) for v in VARIANTS], np.float32)
    bigr = np.zeros(26 * 26, np.float32)
    for a, b in zip(name, name[1:]):
        bigr[ALPHA.index(a) * 26 + ALPHA.index(b)] += 1
    sx, ny = soundex(name), nysiis_key(name)
    keys = np.array([ord(sx[0]) / 90.0] + [int(d) / 6.0 for d in sx[1:]] +
                    [len(ny) / 6.0, len(name) / 20.0, sum(c in "aeiou" for c in name) / 10.0, (ord(ny[-1]) - 97) / 26.0],
                    np.float32)
    return np.concatenate([prof, bigr / max(1.0, bigr.sum()), keys]), np.int32(fam)


def to_tensors(i):
    x, y = tf.numpy_function(make_record, [i], [tf.float32, tf.int32])
    x.set_shape((NFEAT,))
    y.set_shape(())
    return x, y


def make_dataset():
    return tf.data.Dataset.range(10 ** 9).map(to_tensors).batch(BATCH)


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
print("surnamevariants: %.1f ms/step, acc %.3f, wall so far %.1f s" % (full * 1e3, hist["accuracy"][-1], time.perf_counter() - T0))
if TRUTH:
    batch = next(iter(make_dataset()))
    compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("surnamevariants truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
