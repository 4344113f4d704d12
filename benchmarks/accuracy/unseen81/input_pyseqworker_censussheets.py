"""1881-style census enumeration sheets -> occupation-class classifier.

Input path: a keras.utils.PyDataset (workers=1, no multiprocessing) whose
__getitem__ transcribes a batch of household rows, splits the pipe-delimited
columns, fuzzy-matches the enumerator's occupation spelling against a
standard occupation list (pure-Python Levenshtein) and bucket-encodes
relationship / condition / age / birthplace.  Feeds model.fit.
Expected bottleneck: input (Python work inside __getitem__).
"""
import time; T0 = time.perf_counter()
import os, sys, json, random, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 48, 80, 4

OCCUPATIONS = ["cotton weaver", "agricultural labourer", "coal miner", "domestic servant",
               "blacksmith", "dressmaker", "railway porter", "publican", "shoemaker",
               "carpenter", "farmer", "schoolmistress", "laundress", "stone mason",
               "bookkeeper", "clergyman", "fisherman", "tailor", "wheelwright", "scholar"]
OCC_CLASS = [0, 1, 2, 3, 4, 5, 6, 7, 4, 4, 1, 7, 3, 4, 7, 7, 1, 5, 4, 0]  # 8 HISCO-like groups
RELATIONS = ["Head", "Wife", "Son", "Daur", "Servant", "Lodger", "Boarder", "Visitor"]
CONDITIONS = ["Mar", "Unm", "Wid"]
COUNTIES = ["Lancashire", "Yorkshire", "Cornwall", "Durham", "Norfolk", "Glamorgan",
            "Ireland", "Scotland", "Middlesex", "Kent"]
SURNAMES = ["Hargreaves", "Pennington", "Trevithick", "Openshaw", "Rowbotham", "Pengelly"]
GIVEN = ["Thomas", "Ellen", "James", "Mary Ann", "Richard", "Hannah", "John", "Alice"]
HASH_DIM = 128


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


def enumerator_hand(rng, word):
    s = list(word)
    for _ in range(rng.randint(0, 2)):
        k = rng.randrange(len(s))
        if rng.random() < 0.5:
            del s[k]
        else:
            s[k] = rng.choice("aeiounrl")
    return "".join(s)


def census_row(rng, schedule):
    occ = rng.randrange(len(OCCUPATIONS))
    return occ, "%d | %s %s | %s | %s | %d | %s | %s, %s" % (
        schedule, rng.choice(GIVEN), rng.choice(SURNAMES), rng.choice(RELATIONS),
        rng.choice(CONDITIONS), rng.randint(1, 85), enumerator_hand(rng, OCCUPATIONS[occ]),
        rng.choice(COUNTIES), rng.choice(["Blackburn", "Redruth", "Bolton", "Swansea", "Leeds"]))


def encode_row(row):
    cols = [c.strip() for c in row.split("|")]
    occ_text = cols[5].lower()
    dists = np.array([lev(occ_text, o) / len(o) for o in OCCUPATIONS], np.float32)
    rel = np.zeros(len(RELATIONS), np.float32); rel[RELATIONS.index(cols[2])] = 1
    cond = np.zeros(len(CONDITIONS), np.float32); cond[CONDITIONS.index(cols[3])] = 1
    age = int(cols[4])
    ages = np.zeros(9, np.float32); ages[min(age // 10, 8)] = 1
    place = np.zeros(HASH_DIM, np.float32)
    for tok in cols[6].replace(",", " ").split():
        place[zlib.crc32(tok.lower().encode()) % HASH_DIM] = 1
    return np.concatenate([dists, rel, cond, ages, place])


NFEAT = len(OCCUPATIONS) + len(RELATIONS) + len(CONDITIONS) + 9 + HASH_DIM


class CensusSheets(keras.utils.PyDataset):
    def __init__(self, n_batches, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = random.Random(1881 * 1000 + idx)
        xs, ys = [], []
        for k in range(BATCH):
            occ, row = census_row(rng, idx * BATCH + k)
            xs.append(encode_row(row))
            ys.append(OCC_CLASS[occ])
        return np.stack(xs), np.array(ys, np.int32)


def build_model():
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(8),
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
sheets = CensusSheets(STEPS, workers=1, use_multiprocessing=False)
full, hist = train(sheets)
emit({"steps_per_second": 1.0 / full})
print("censussheets: %.1f ms/step, acc %.3f, wall so far %.1f s" % (full * 1e3, hist["accuracy"][-1], time.perf_counter() - T0))
if TRUTH:
    batch = sheets[0]
    compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("censussheets truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
