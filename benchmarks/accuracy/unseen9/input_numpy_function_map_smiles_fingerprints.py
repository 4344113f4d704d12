"""Predict a solubility-like property from SMILES strings.

Fingerprints (hashed circular substructures, a poor man's Morgan FP) are computed on the fly
in Python through tf.numpy_function inside a serial tf.data map, with random SMILES rotation
as augmentation. MLP on top, trained with model.fit + validation_data + CSVLogger.
"""

import argparse
import json
import os
import re
import tempfile
import time
import zlib

import keras
import numpy as np
import tensorflow as tf

FP_BITS = 2048
N_DESC = 16
RADIUS = 4
PAIR_WINDOW = 10
BATCH = 64
STEPS_PER_EPOCH = 50
EPOCHS = 3

TOKEN_RE = re.compile(r"Cl|Br|[BCNOSPFIcnos]|\d|\(|\)|=|#")
ATOMS = ["C", "C", "C", "C", "c", "c", "N", "O", "n", "o", "S", "F", "Cl", "Br", "P"]


def random_smiles(rng):
    out = []
    depth = 0
    open_rings = []
    for _ in range(int(rng.integers(25, 70))):
        r = rng.random()
        if r < 0.07:
            out.append("(")
            depth += 1
        elif r < 0.14 and depth > 0:
            out.append(")")
            depth -= 1
        elif r < 0.18:
            out.append("=")
        elif r < 0.22:
            if open_rings and rng.random() < 0.6:
                out.append(str(open_rings.pop()))
            elif len(open_rings) < 3:
                k = len(open_rings) + 1
                open_rings.append(k)
                out.append(str(k))
        out.append(ATOMS[int(rng.integers(len(ATOMS)))])
    out.extend(")" * depth)
    out.extend(str(k) for k in open_rings)
    return "".join(out)


def fake_logs(smiles):
    toks = TOKEN_RE.findall(smiles)
    polar = sum(t in ("N", "O", "n", "o") for t in toks)
    halo = sum(t in ("F", "Cl", "Br") for t in toks)
    arom = sum(t.islower() for t in toks)
    return 0.3 * polar - 0.5 * halo - 0.1 * arom + 0.02 * len(toks)


def featurize(smiles_bytes):
    s = smiles_bytes.decode()
    toks = TOKEN_RE.findall(s)
    # augmentation: rotate the token list (cheap stand-in for randomized SMILES)
    if len(toks) > 4 and np.random.random() < 0.5:
        k = np.random.randint(len(toks))
        toks = toks[k:] + toks[:k]
    fp = np.zeros(FP_BITS, np.float32)
    n = len(toks)
    for i in range(n):
        if not toks[i][0].isalpha():
            continue
        for r in range(RADIUS + 1):
            env = "".join(toks[max(0, i - r) : i + r + 1])
            fp[zlib.crc32(env.encode()) % FP_BITS] += 1.0
            fp[zlib.adler32(env[::-1].encode()) % FP_BITS] += 0.5
    # atom-pair part: (atom, atom, topological-ish distance) triples
    atoms = [(i, t) for i, t in enumerate(toks) if t[0].isalpha()]
    for a in range(len(atoms)):
        ia, ta = atoms[a]
        for b in range(a + 1, min(a + 1 + PAIR_WINDOW, len(atoms))):
            ib, tb = atoms[b]
            key = f"{ta}|{tb}|{ib - ia}" if ta <= tb else f"{tb}|{ta}|{ib - ia}"
            fp[zlib.crc32(key.encode()) % FP_BITS] += 0.25
    desc = np.zeros(N_DESC, np.float32)
    depth = 0
    for t in toks:
        if t == "(":
            depth += 1
            desc[0] = max(desc[0], depth)
        elif t == ")":
            depth -= 1
        elif t.isdigit():
            desc[1] += 0.5
        elif t in ("=", "#"):
            desc[2] += 1
        else:
            desc[3 + (hash(t) % (N_DESC - 3))] += 1
    x = np.concatenate([np.log1p(fp), desc / 10.0])
    return x.astype(np.float32)


def make_dataset(smiles, y, training):
    ds = tf.data.Dataset.from_tensor_slices((smiles, y))
    if training:
        ds = ds.shuffle(len(smiles)).repeat()

    def _map(s, t):
        x = tf.numpy_function(featurize, [s], tf.float32)
        x.set_shape([FP_BITS + N_DESC])
        return x, t

    return ds.map(_map).batch(BATCH)


def build_model():
    inp = keras.Input((FP_BITS + N_DESC,))
    h = keras.layers.Dense(1536, activation="relu")(inp)
    h = keras.layers.Dropout(0.2)(h)
    h = keras.layers.Dense(768, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


class StepClock(keras.callbacks.Callback):
    """Wall time per training step, skipping warm-up steps and validation passes."""

    def __init__(self, skip=5):
        super().__init__()
        self.skip, self.step, self.t0, self.last = skip, 0, None, None
        self.paused = self.pending = 0.0

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.step += 1
        if self.t0 is None:
            if self.step >= self.skip:
                self.t0, self.s0 = now, self.step
        else:
            self.paused += self.pending
        self.pending = 0.0
        self.last = now

    def on_test_begin(self, logs=None):
        self._tb = time.perf_counter()

    def on_test_end(self, logs=None):
        self.pending += time.perf_counter() - self._tb

    def sec_per_step(self):
        return (self.last - self.t0 - self.paused) / (self.step - self.s0)


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    rng = np.random.default_rng(7)
    smiles = [random_smiles(rng) for _ in range(6000)]
    y = np.array([fake_logs(s) for s in smiles], np.float32) + rng.normal(0, 0.2, 6000).astype(
        np.float32
    )
    tr_s, va_s = smiles[:5000], smiles[5000:5600]
    tr_y, va_y = y[:5000], y[5000:5600]

    model = build_model()
    logdir = tempfile.mkdtemp(prefix="smiles_")
    clock = StepClock()
    model.fit(
        make_dataset(tr_s, tr_y, True),
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=EPOCHS,
        validation_data=make_dataset(va_s, va_y, False),
        callbacks=[keras.callbacks.CSVLogger(os.path.join(logdir, "log.csv")), clock],
        verbose=2,
    )
    full = clock.sec_per_step()
    report(steps_per_second=1.0 / full)
    print(f"training: {1.0 / full:.2f} steps/s")

    if args.truth:
        xb, yb = next(iter(make_dataset(tr_s, tr_y, True)))
        cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        model2 = build_model()
        clock2 = StepClock()
        model2.fit(
            cached,
            steps_per_epoch=STEPS_PER_EPOCH,
            epochs=EPOCHS,
            callbacks=[keras.callbacks.CSVLogger(os.path.join(logdir, "log2.csv")), clock2],
            verbose=0,
        )
        compute = clock2.sec_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        report(truth_input_fraction=frac)
        print(
            f"truth: full {full * 1e3:.1f} ms/step, cached {compute * 1e3:.1f} ms/step, "
            f"input fraction {frac:.3f}"
        )


if __name__ == "__main__":
    main()
