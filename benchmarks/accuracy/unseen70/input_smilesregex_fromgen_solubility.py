import time
T0 = time.perf_counter()
import os, sys, json, re, math, tempfile, shutil, zlib
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import warnings
warnings.filterwarnings("ignore")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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

# ---- input_smilesregex_fromgen_solubility: SMILES strings tokenised with a regex
# and hashed into circular-ish n-gram fingerprints inside a Python generator that
# feeds model.fit through tf.data.Dataset.from_generator.
BATCH = 32
STEPS = 90
EPOCHS = 3
SEQ = 96
FP_BITS = 1024
VOCAB = ["C", "c", "N", "n", "O", "o", "S", "F", "Cl", "Br", "(", ")", "=", "#",
         "1", "2", "3", "[nH]", "[O-]", "[N+]", "@", "@@", "/", "\\"]
TOKEN_RE = re.compile(r"(\[[^\]]+\]|Br|Cl|@@|[BCNOSPFIcnos]|\(|\)|=|#|\d|@|/|\\)")
FRAGS = ["c1ccccc1", "CCO", "C(=O)O", "N", "CC(C)C", "c1ccncc1", "OC", "Cl", "Br",
         "C#N", "S(=O)(=O)N", "[nH]", "C1CCCCC1", "F", "[N+](=O)[O-]", "CC=CC"]


def make_corpus(n, seed=70):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(3, 9))
        parts = [FRAGS[int(i)] for i in rng.integers(0, len(FRAGS), size=k)]
        out.append("".join(p if j % 3 else "(" + p + ")" for j, p in enumerate(parts)) + "C")
    return out


def featurise(smiles):
    toks = TOKEN_RE.findall(smiles)
    ids = np.zeros(SEQ, np.int32)
    for i, t in enumerate(toks[:SEQ]):
        ids[i] = (VOCAB.index(t) + 1) if t in VOCAB else len(VOCAB) + 1
    fp = np.zeros(FP_BITS, np.float32)
    depth, maxdepth, rings = 0, 0, 0
    for t in toks:
        if t == "(":
            depth += 1
            maxdepth = max(maxdepth, depth)
        elif t == ")":
            depth -= 1
        elif t.isdigit():
            rings += 1
    for radius in range(1, 6):
        for i in range(len(toks) - radius + 1):
            frag = "".join(toks[i:i + radius])
            for salt in range(3):
                h = zlib.crc32((frag + str(salt) + str(radius)).encode())
                fp[h % FP_BITS] += 1.0
    heavy = sum(1 for t in toks if t[0].isalpha() or t[0] == "[")
    logs = 0.02 * heavy - 0.3 * smiles.count("O") - 0.2 * smiles.count("N") + 0.1 * rings - 0.05 * maxdepth
    return ids, np.log1p(fp), np.float32(logs)


CORPUS = make_corpus(4000)


def gen():
    rng = np.random.default_rng(7)
    while True:
        s = CORPUS[int(rng.integers(0, len(CORPUS)))]
        # augmentation: random rotation of the SMILES string fragment order
        cut = int(rng.integers(0, max(1, len(s) // 4)))
        s = s[cut:] + s[:cut] if rng.random() < 0.3 else s
        ids, fp, y = featurise(s)
        yield (ids, fp), y


def make_model():
    seq_in = keras.Input((SEQ,), dtype="int32")
    fp_in = keras.Input((FP_BITS,))
    x = keras.layers.Embedding(len(VOCAB) + 2, 16)(seq_in)
    x = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    f = keras.layers.Dense(64, activation="relu")(fp_in)
    h = keras.layers.Concatenate()([x, f])
    h = keras.layers.Dense(64, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    m = keras.Model([seq_in, fp_in], out)
    m.compile(optimizer="adam", loss="mse")
    return m


def make_ds():
    sig = ((tf.TensorSpec((SEQ,), tf.int32), tf.TensorSpec((FP_BITS,), tf.float32)),
           tf.TensorSpec((), tf.float32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH)


def run(ds):
    keras.utils.set_random_seed(70)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    full = run(make_ds())
    sps = 1.0 / full
    emit({"steps_per_second": sps})
    print(f"[input_smilesregex_fromgen_solubility] full {full*1000:.1f} ms/step, {sps:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(make_ds()))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[input_smilesregex_fromgen_solubility] truth: compute {comp*1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
