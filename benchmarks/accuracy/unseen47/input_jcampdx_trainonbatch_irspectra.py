"""Analytical chemistry: tag functional groups in infrared spectra.

Synthetic FTIR transmittance spectra from instruments with different ranges and
resolutions are written as JCAMP-DX (##XYDATA=(X++(Y..Y))) text files; each
step a Python loop parses a batch of files, rescales the integer ordinates,
converts to absorbance, interpolates onto a common wavenumber grid and removes
a polynomial baseline, then keras train_on_batch fits a multi-label Conv1D.
"""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import keras

SEED = 2147
N_FILES = 640
GRID = np.linspace(600.0, 4000.0, 1700)
GROUPS = {"OH": [3350], "CO": [1715], "CH": [2950, 2870], "NH": [3400, 1600],
          "CN": [2250], "CC": [1650], "COC": [1100], "ARO": [1600, 1500, 750]}
BATCH = 32
STEPS = 40
EPOCHS = 4


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def write_jcamp(path, rng):
    labels = (rng.random(len(GROUPS)) < 0.35).astype(np.float32)
    first, last = rng.uniform(400, 600), rng.uniform(4000, 4400)
    res = rng.choice([1.0, 2.0, 4.0])
    n = int((last - first) / res)
    x = first + res * np.arange(n)
    absb = 0.02 + 0.00001 * (x - 400) + rng.normal(0, 0.004, n)
    for on, centers in zip(labels, GROUPS.values()):
        if on:
            for c in centers:
                w = 60.0 if c > 3000 else 15.0
                absb += rng.uniform(0.3, 1.0) * np.exp(-0.5 * ((x - c) / w) ** 2)
    trans = np.clip(10 ** (-absb), 1e-4, 1.0)
    yint = np.round(trans / 0.0001).astype(int)
    out = ["##TITLE=sample\n", "##JCAMP-DX=4.24\n", "##DATA TYPE=INFRARED SPECTRUM\n",
           "##XUNITS=1/CM\n", "##YUNITS=TRANSMITTANCE\n",
           "##FIRSTX=%.4f\n" % x[0], "##LASTX=%.4f\n" % x[-1], "##DELTAX=%.4f\n" % res,
           "##XFACTOR=1.0\n", "##YFACTOR=0.0001\n", "##NPOINTS=%d\n" % n,
           "##XYDATA=(X++(Y..Y))\n"]
    for i in range(0, n, 10):
        out.append("%.4f " % x[i] + " ".join(str(v) for v in yint[i:i + 10]) + "\n")
    out.append("##END=\n")
    with open(path, "w") as fh:
        fh.writelines(out)
    return labels


def read_jcamp(path):
    meta, xs, ys, in_data = {}, [], [], False
    with open(path) as fh:
        for line in fh:
            if line.startswith("##"):
                key, _, val = line[2:].partition("=")
                meta[key.strip().upper()] = val.strip()
                in_data = key.strip().upper() == "XYDATA"
                continue
            if in_data:
                tok = line.split()
                x0 = float(tok[0])
                for k, v in enumerate(tok[1:]):
                    xs.append(x0 + k * float(meta["DELTAX"]))
                    ys.append(int(v) * float(meta["YFACTOR"]))
    x = np.array(xs) * float(meta["XFACTOR"])
    t = np.clip(np.array(ys), 1e-4, None)
    a = -np.log10(t)
    spec = np.interp(GRID, x, a)
    lo = spec <= np.percentile(spec, 30)
    coef = np.polyfit(GRID[lo], spec[lo], 3)
    spec = spec - np.polyval(coef, GRID)
    spec = spec / (np.abs(spec).max() + 1e-6)
    return spec.astype(np.float32)[:, None]


def load_batch(files, labels, idx):
    return np.stack([read_jcamp(files[i]) for i in idx]), labels[idx]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((len(GRID), 1))
    x = inp
    for f in (16, 24, 32):
        x = keras.layers.Conv1D(f, 7, padding="same", activation="relu")(x)
        x = keras.layers.Conv1D(f, 7, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    out = keras.layers.Dense(len(GROUPS), activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m


def train(batch_fn):
    model = build_model()
    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batch_fn(epoch, s)
            loss = float(model.train_on_batch(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    return float(np.mean(gaps[5:])), loss


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u47_input_jcampdx_trainonbatch_irspectra_")
    try:
        rng = np.random.default_rng(SEED)
        files, labels = [], []
        for i in range(N_FILES):
            p = os.path.join(tmp, "ir_%04d.jdx" % i)
            labels.append(write_jcamp(p, rng))
            files.append(p)
        labels = np.stack(labels)
        orders = [np.random.default_rng(SEED + e).permutation(N_FILES) for e in range(EPOCHS)]

        def real_batch(epoch, s):
            start = (s * BATCH) % N_FILES
            return load_batch(files, labels, orders[epoch][start:start + BATCH])

        sps, loss = train(real_batch)
        emit({"steps_per_second": 1.0 / sps})
        msg = ""
        if "--truth" in sys.argv:
            fixed = load_batch(files, labels, orders[0][:BATCH])
            csps, _ = train(lambda e, s: fixed)
            frac = min(max((sps - csps) / sps, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
        print("jcamp ir: loss %.4f full %.4fs/step%s wall %.1fs"
              % (loss, sps, msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
