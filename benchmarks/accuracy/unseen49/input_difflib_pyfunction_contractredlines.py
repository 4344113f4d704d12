"""Law: flagging material changes between two versions of a contract clause.
Pairs of clause texts (original vs. counterparty redline) are generated in memory as string
tensors; a serial tf.data map calls tf.py_function, which runs difflib.SequenceMatcher over the
token lists and turns the opcodes into edit statistics plus hashed changed-token features for model.fit."""
import os, sys, time, json, difflib, zlib, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, N_PAIRS, CLAUSE_LEN, DIM = 32, 60, 4, 3000, 340, 1024
VOCAB = ["shall", "party", "indemnify", "liability", "notwithstanding", "herein", "termination", "breach",
         "warranty", "licensor", "licensee", "consent", "assign", "governing", "law", "jurisdiction",
         "confidential", "damages", "limitation", "exclusive", "perpetual", "royalty", "audit", "notice"]
MATERIAL = {"indemnify", "liability", "exclusive", "perpetual", "royalty", "damages"}

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t
    def sec_per_step(self):
        g = self.gaps[5:] or self.gaps
        return float(np.mean(g))

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def make_pairs(rng):
    olds, news, labels = [], [], []
    for _ in range(N_PAIRS):
        toks = [VOCAB[i] + ("" if rng.random() < 0.7 else str(int(rng.integers(50)))) for i in rng.integers(0, len(VOCAB), CLAUSE_LEN)]
        new = list(toks); material = 0
        for _ in range(int(rng.integers(2, 12))):
            pos = int(rng.integers(len(new))); op = rng.integers(3); w = VOCAB[int(rng.integers(len(VOCAB)))]
            if op == 0:
                new.insert(pos, w)
            elif op == 1 and len(new) > 10:
                w = new.pop(pos)
            else:
                new[pos] = w
            material |= int(w in MATERIAL and rng.random() < 0.6)
        olds.append(" ".join(toks)); news.append(" ".join(new)); labels.append(material)
    return np.array(olds), np.array(news), np.array(labels, np.float32)

def redline_features(old, new):
    a = old.numpy().decode().split(); b = new.numpy().decode().split()
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    vec = np.zeros(DIM + 6, np.float32); counts = {"insert": 0, "delete": 0, "replace": 0, "equal": 0}
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        counts[tag] += 1
        if tag != "equal":
            for w in a[i1:i2] + b[j1:j2]:
                vec[zlib.crc32((tag + w).encode()) % DIM] += 1.0
    vec[DIM:] = [counts["insert"], counts["delete"], counts["replace"], counts["equal"] / 10.0,
                 sm.ratio(), (len(b) - len(a)) / 10.0]
    return vec

def featurize(old, new, y):
    x = tf.py_function(redline_features, [old, new], tf.float32)
    x.set_shape((DIM + 6,))
    return x, y

def build_model():
    inp = keras.Input((DIM + 6,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dense(1536, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_input_difflib_pyfunction_contractredlines_")
    try:
        rng = np.random.default_rng(49); tf.random.set_seed(49)
        olds, news, labels = make_pairs(rng)
        ds = (tf.data.Dataset.from_tensor_slices((olds, news, labels)).shuffle(N_PAIRS, seed=3).repeat()
              .map(featurize).batch(BATCH).prefetch(1))
        model = build_model(); timer = StepTimer()
        model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
        full = timer.sec_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = "contract redlines: %.4f s/step" % full
        if truth:
            batch = next(iter(ds))
            model2 = build_model(); t2 = StepTimer()
            model2.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[t2], verbose=0)
            comp = t2.sec_per_step()
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
