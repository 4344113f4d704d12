"""Protein flexibility: predict per-residue CA B-factors from structure files.

Synthetic protein chains are written as fixed-column PDB text files; a Python
generator wrapped in tf.data.Dataset.from_generator re-reads and parses every
ATOM record each epoch, builds residue contact-number features and crops a
window, and model.fit trains a dilated Conv1D regressor on the batches.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 47
N_FILES = 360
WIN = 128
BATCH = 16
STEPS = 45
EPOCHS = 2
AA3 = ["ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE",
       "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL"]
SIDE = {a: (i % 5) for i, a in enumerate(AA3)}


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def write_pdb(path, rng):
    n = int(rng.integers(140, 220))
    steps = rng.normal(size=(n, 3))
    steps = 3.8 * steps / np.linalg.norm(steps, axis=1, keepdims=True)
    ca = np.cumsum(steps * 0.6 + np.array([1.2, 0.4, 0.0]), axis=0)
    d = np.linalg.norm(ca[:, None] - ca[None], axis=-1)
    contacts = (d < 10.0).sum(1)
    bfac = 80.0 / (1.0 + 0.15 * contacts) + rng.normal(0, 2.0, n) + 8.0
    lines, serial = [], 1
    for i in range(n):
        res = AA3[int(rng.integers(0, 20))]
        names = ["N", "CA", "C", "O", "CB"] + ["CG%d" % k for k in range(SIDE[res])]
        for name in names:
            xyz = ca[i] + (rng.normal(0, 1.2, 3) if name != "CA" else 0.0)
            b = bfac[i] + (0.0 if name == "CA" else rng.normal(0, 3))
            el = name[0]
            lines.append("ATOM  %5d %-4s %3s A%4d    %8.3f%8.3f%8.3f%6.2f%6.2f          %2s\n"
                         % (serial, " " + name if len(name) < 4 else name, res, i + 1,
                            xyz[0], xyz[1], xyz[2], 1.0, b, el))
            serial += 1
    lines.append("TER\nEND\n")
    with open(path, "w") as fh:
        fh.writelines(lines)


def parse_pdb(path):
    residues = {}
    with open(path) as fh:
        for line in fh:
            if not line.startswith("ATOM"):
                continue
            name = line[12:16].strip()
            resn = line[17:20]
            resi = int(line[22:26])
            x, y, z = float(line[30:38]), float(line[38:46]), float(line[46:54])
            b = float(line[60:66])
            r = residues.setdefault(resi, {"resn": resn, "atoms": [], "ca": None, "b": 0.0})
            r["atoms"].append((x, y, z))
            if name == "CA":
                r["ca"] = (x, y, z)
                r["b"] = b
    return [residues[k] for k in sorted(residues)]


def featurize(res, rng):
    n = len(res)
    ca = np.array([r["ca"] for r in res], np.float32)
    allat = [np.array(r["atoms"], np.float32) for r in res]
    d = np.sqrt(((ca[:, None] - ca[None]) ** 2).sum(-1))
    feats = np.zeros((n, 26), np.float32)
    for i, r in enumerate(res):
        feats[i, AA3.index(r["resn"])] = 1.0
        feats[i, 20] = len(r["atoms"]) / 10.0
        cen = allat[i].mean(0)
        feats[i, 21] = np.sqrt(((allat[i] - cen) ** 2).sum(-1)).mean() / 3.0
    feats[:, 22] = (d < 8.0).sum(1) / 20.0
    feats[:, 23] = (d < 12.0).sum(1) / 40.0
    feats[:, 24] = np.sqrt(((ca - ca.mean(0)) ** 2).sum(-1)) / 30.0
    feats[:, 25] = np.linspace(0, 1, n)
    y = np.array([r["b"] for r in res], np.float32)
    y = (y - 20.0) / 10.0
    s = int(rng.integers(0, n - WIN + 1))
    return feats[s:s + WIN], y[s:s + WIN, None]


def make_dataset(files):
    def gen():
        rng = np.random.default_rng(SEED)
        while True:
            for p in rng.permutation(files):
                yield featurize(parse_pdb(p), rng)
    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((WIN, 26), tf.float32),
                               tf.TensorSpec((WIN, 1), tf.float32)))
    return ds.batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((WIN, 26))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    for rate in (1, 2, 4, 8, 1, 2):
        h = keras.layers.Conv1D(128, 5, padding="same", dilation_rate=rate, activation="relu")(x)
        x = keras.layers.Add()([x, h])
    out = keras.layers.Conv1D(1, 1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u47_input_pdbparse_fromgen_proteinbfactor_")
    try:
        rng = np.random.default_rng(SEED)
        files = []
        for i in range(N_FILES):
            p = os.path.join(tmp, "chain_%04d.pdb" % i)
            write_pdb(p, rng)
            files.append(p)
        sps, loss = train(make_dataset(files))
        emit({"steps_per_second": 1.0 / sps})
        msg = ""
        if "--truth" in sys.argv:
            batch = next(iter(make_dataset(files)))
            csps, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((sps - csps) / sps, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
        print("pdb bfactor: loss %.4f full %.4fs/step%s wall %.1fs"
              % (loss, sps, msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
