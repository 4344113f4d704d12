"""Aqueous solubility regression from SMILES strings.

Each molecule string is tokenised (two-letter atoms, bracket atoms, ring
closures) and hashed into a circular-substructure count vector on the fly;
the model combines a token CNN with an MLP over the fingerprint.
"""

import argparse
import json
import os
import time
import zlib

import numpy as np
import tensorflow as tf
import keras

N_MOLECULES = 20000
MAX_TOKENS = 128
FP_BITS = 2048
FP_RADIUS = 2
BATCH_SIZE = 64
STEPS = 200
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(11)

# ---------------------------------------------------------------- data
ATOMS = ["C", "C", "C", "c", "c", "N", "n", "O", "o", "S", "F", "Cl", "Br", "[nH]", "[O-]"]
BONDS = ["", "", "", "=", "#"]


def random_smiles(gen):
    parts = []
    open_rings = []
    for _ in range(gen.integers(30, 90)):
        r = gen.random()
        if r < 0.08 and len(open_rings) < 3:
            ring = str(len(open_rings) + 1)
            open_rings.append(ring)
            parts.append(ATOMS[gen.integers(len(ATOMS))] + ring)
        elif r < 0.14 and open_rings:
            parts.append(ATOMS[gen.integers(len(ATOMS))] + open_rings.pop())
        elif r < 0.22:
            parts.append("(" + ATOMS[gen.integers(len(ATOMS))] + ")")
        else:
            parts.append(BONDS[gen.integers(len(BONDS))] + ATOMS[gen.integers(len(ATOMS))])
    for ring in open_rings:
        parts.append("C" + ring)
    return "".join(parts)


smiles = np.array([random_smiles(rng) for _ in range(N_MOLECULES)])
log_s = np.array(
    [-0.02 * len(s) + 0.4 * s.count("O") - 0.3 * s.count("Cl") for s in smiles], dtype=np.float32
)
log_s += rng.normal(0, 0.3, size=N_MOLECULES).astype(np.float32)

VOCAB = {}


def tokenize(s):
    tokens = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "[":
            j = s.index("]", i)
            tokens.append(s[i : j + 1])
            i = j + 1
        elif ch in "CB" and i + 1 < len(s) and s[i + 1] in "lr":
            tokens.append(s[i : i + 2])
            i += 2
        else:
            tokens.append(ch)
            i += 1
    return tokens


def token_id(tok):
    if tok not in VOCAB:
        VOCAB[tok] = len(VOCAB) + 1
    return VOCAB[tok]


def featurize(smiles_bytes):
    s = smiles_bytes.decode("utf-8")
    tokens = tokenize(s)
    ids = np.zeros(MAX_TOKENS, dtype=np.int32)
    for k, tok in enumerate(tokens[:MAX_TOKENS]):
        ids[k] = token_id(tok)
    fp = np.zeros(FP_BITS, dtype=np.float32)
    atoms = [t for t in tokens if t not in "()=#123456789"]
    for radius in range(FP_RADIUS + 1):
        for centre in range(len(atoms)):
            lo = max(0, centre - radius)
            env = "|".join(atoms[lo : centre + radius + 1])
            for shift in range(2):
                h = zlib.crc32(f"{radius}:{shift}:{env}".encode()) % FP_BITS
                fp[h] += 1.0
    for a in range(len(atoms)):
        for b in range(a + 1, min(len(atoms), a + 8)):
            pair = atoms[a] + ">" + atoms[b] + str(b - a)
            fp[zlib.crc32(pair.encode()) % FP_BITS] += 0.5
    return ids, np.log1p(fp)


def tf_featurize(s, y):
    ids, fp = tf.numpy_function(featurize, [s], [tf.int32, tf.float32])
    ids.set_shape((MAX_TOKENS,))
    fp.set_shape((FP_BITS,))
    return (ids, fp), y


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((smiles, log_s))
    ds = ds.shuffle(N_MOLECULES, seed=0).repeat()
    ds = ds.map(tf_featurize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    ds = ds.batch(BATCH_SIZE, drop_remainder=True)
    return ds.prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
def build_model():
    ids_in = keras.Input(shape=(MAX_TOKENS,), dtype="int32", name="tokens")
    fp_in = keras.Input(shape=(FP_BITS,), name="fingerprint")
    x = keras.layers.Embedding(64, 64)(ids_in)
    for width in (48, 64, 96):
        x = keras.layers.Conv1D(width, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    f = keras.layers.Dense(512, activation="relu")(fp_in)
    f = keras.layers.Dropout(0.2)(f)
    f = keras.layers.Dense(256, activation="relu")(f)
    h = keras.layers.Concatenate()([x, f])
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    model = keras.Model([ids_in, fp_in], out)
    model.compile(optimizer=keras.optimizers.Adam(LR), loss="mse", metrics=["mae"])
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        d = np.concatenate([np.diff(e) for e in self.epochs if len(e) > 1])
        return float(np.mean(d[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds):
    model = build_model()
    clock = StepClock()
    model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


full = train(make_dataset())
write_out({"steps_per_second": 1.0 / full})
summary = f"smiles solubility: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
