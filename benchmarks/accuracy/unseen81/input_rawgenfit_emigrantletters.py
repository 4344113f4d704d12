"""Transcribed emigrant letters -> home region of the writer.

Input path: a plain Python generator (no tf.data) passed straight to
model.fit.  Each letter is transcribed text with period spellings; the
generator normalises spelling, tokenises, and builds fastText-style hashed
character-trigram ids for every word.  Expected bottleneck: input (Python
tokenisation and hashing per letter).
"""
import time; T0 = time.perf_counter()
import os, sys, json, random, re, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 64, 180, 3
SEQ, BUCKETS = 384, 8000

REGIONS = {
    "Ulster": ["wee", "ye", "brave", "flax", "Derry", "meeting-house", "sowl", "ould"],
    "Westphalia": ["Vaterland", "Gott", "Kirche", "Pastor", "Hof", "Bauer", "Brief", "Heimat"],
    "Cornwall": ["mine", "tin", "Methody", "chapel", "Redruth", "bal", "maid", "cousin Jack"],
    "Norway": ["fjord", "gaard", "prest", "Kristiania", "husmand", "brev", "far", "mor"],
    "Highlands": ["glen", "croft", "laird", "Kirk", "Gaelic", "sheiling", "factor", "clearance"],
    "Galicia": ["Lemberg", "szlachta", "cerkiew", "hromada", "wojt", "kolo", "dziedzic", "Przemysl"],
}
COMMON = ("dear brother i take up my pen to inform you that we arrived safe after a passage of "
          "weeks on the ship and landed at new york the voyage was hard and many were sick "
          "the land here is good and wages are high but the winter is long give my love to "
          "mother and all enquiring friends and write soon your affectionate son").split()
ARCHAIC = {"recieved": "received", "shew": "show", "untill": "until", "chuse": "choose",
           "compleat": "complete", "publick": "public", "doller": "dollar", "allmost": "almost"}
TOKEN = re.compile(r"[a-z\-']+")
LABELS = list(REGIONS)


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def write_letter(rng, region):
    words = []
    for _ in range(rng.randint(120, 180)):
        r = rng.random()
        if r < 0.12:
            words.append(rng.choice(REGIONS[region]))
        elif r < 0.17:
            words.append(rng.choice(list(ARCHAIC)))
        else:
            w = rng.choice(COMMON)
            words.append(w.capitalize() if rng.random() < 0.1 else w)
        if rng.random() < 0.08:
            words[-1] += rng.choice([",", ".", ";", " &c."])
    return " ".join(words)


def encode_letter(text):
    ids = []
    for tok in TOKEN.findall(text.lower()):
        tok = ARCHAIC.get(tok, tok)
        ids.append(zlib.crc32(tok.encode()) % BUCKETS + 1)
        padded = "<" + tok + ">"
        for n in (3, 4, 5, 6):                    # fastText-style subword n-grams
            for i in range(len(padded) - n + 1):
                ids.append(zlib.crc32(padded[i:i + n].encode()) % BUCKETS + 1)
    ids = ids[:SEQ]
    return ids + [0] * (SEQ - len(ids))


def letter_batches(seed):
    rng = random.Random(seed)
    while True:
        ys = [rng.randrange(len(LABELS)) for _ in range(BATCH)]
        xs = [encode_letter(write_letter(rng, LABELS[y])) for y in ys]
        yield np.array(xs, np.int32), np.array(ys, np.int32)


def build_model():
    model = keras.Sequential([
        keras.Input((SEQ,), dtype="int32"),
        keras.layers.Embedding(BUCKETS + 1, 32),
        keras.layers.Conv1D(32, 5, activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(len(LABELS)),
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


def train(data):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


keras.utils.set_random_seed(81)
full, hist = train(letter_batches(81))
emit({"steps_per_second": 1.0 / full})
print("emigrantletters: %.1f ms/step, acc %.3f, wall so far %.1f s" % (full * 1e3, hist["accuracy"][-1], time.perf_counter() - T0))
if TRUTH:
    batch = next(letter_batches(82))
    compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("emigrantletters truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
