"""Skin patch-test panel notes -> irritation grade (0 none .. 3 strong).

Dermatology technicians write free-text readings for each patch site
("D2 site 4: mild erythema, no oedema, slight papules ...").  A Python loop
tokenises each batch (regex, lower-casing, vocabulary lookup with hashed
out-of-vocabulary buckets and hashed bigrams) and feeds a custom
@tf.function GradientTape training step.
"""
import time; T0 = time.perf_counter()
import os, sys, json, re, zlib
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


BATCH, STEPS, SEQ = 64, 650, 160
VOCAB, BUCKETS = 4000, 6000
TOKEN_RE = re.compile(r"[a-z]+|\d+(?:\.\d+)?|[;:,.+/-]")
WORDS = ("erythema oedema papules vesicles itching burning dryness scaling none mild moderate "
         "strong slight faint reaction irritation site panel volunteer patch occlusive removed "
         "reading day hours fragrance mix linalool limonene geraniol citral eugenol coumarin "
         "cinnamal isoeugenol balsam peru lanolin preservative methylisothiazolinone petrolatum "
         "control negative positive doubtful follicular spread edge sharp diffuse persistent "
         "resolved forearm back upper lower left right observed noted technician reports").split()


def make_notes(n, seed=88):
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 4, n).astype(np.int32)
    sev = ["none", "slight", "mild", "moderate", "strong"]
    notes = []
    for g in grades:
        parts = []
        for site in range(int(rng.integers(4, 9))):
            s = sev[min(4, max(0, g + int(rng.integers(-1, 2))))]
            filler = " ".join(rng.choice(WORDS, int(rng.integers(4, 12))))
            parts.append(f"D{int(rng.integers(2, 5))} site {site + 1}: {s} erythema, "
                         f"{rng.choice(sev)} oedema; {filler} {rng.uniform(0, 5):.1f} mm")
        notes.append(" ".join(parts))
    return notes, grades


NOTES, GRADES = make_notes(3000)
VOCAB_IDS = {w: i + 2 for i, w in enumerate(sorted(set(WORDS + ["d2", "d3", "d4", "site", "mm"])))}


def tokenize(text):
    toks = TOKEN_RE.findall(text.lower())
    ids = []
    for t in toks:
        i = VOCAB_IDS.get(t)
        ids.append(i if i is not None else VOCAB + zlib.crc32(t.encode()) % 500)
    bigrams = [VOCAB + 500 + zlib.crc32(f"{a}_{b}".encode()) % BUCKETS for a, b in zip(toks, toks[1:])]
    subwords = []  # fastText-style character trigrams of every token
    for t in toks:
        w = f"<{t}>"
        subwords.extend(VOCAB + 500 + zlib.crc32(w[k:k + 3].encode()) % BUCKETS for k in range(len(w) - 2))
    seq = (ids + bigrams + sorted(set(subwords)))[:SEQ]
    return seq + [0] * (SEQ - len(seq))


def make_batch(rng):
    idx = rng.integers(0, len(NOTES), BATCH)
    x = np.array([tokenize(NOTES[i]) for i in idx], np.int32)
    return x, GRADES[idx]


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((SEQ,), dtype="int32")
    h = layers.Embedding(VOCAB + 500 + BUCKETS, 32)(inp)
    h = layers.Conv1D(48, 5, padding="same", activation="relu")(h)
    h = layers.GlobalMaxPooling1D()(h)
    h = layers.Dense(64, activation="relu")(h)
    return keras.Model(inp, layers.Dense(4)(h))


def train(batch_source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


rng = np.random.default_rng(0)
full, last_loss = train(lambda: make_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"[patchpanels] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) loss {last_loss:.3f} wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    fixed = make_batch(np.random.default_rng(1))
    compute, _ = train(lambda: fixed)
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[patchpanels] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
