"""Clinical flow cytometry: classify patient samples (healthy / B-cell lymphoma /
T-cell lymphoma / acute leukaemia) from immunophenotyping tubes.

Each tube is written as an FCS 3.0 file (ASCII HEADER offsets, '|'-delimited
TEXT keywords including $SPILLOVER, big-endian float32 DATA). The training loop
parses each file, applies fluorescence compensation with the spillover
matrix, arcsinh-transforms the channels, subsamples events and renders 2-D
density plots of standard marker pairs, then calls model.train_on_batch.
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

CHANNELS = ["FSC-A", "SSC-A", "CD45", "CD3", "CD4", "CD8", "CD19", "CD34"]
PAIRS = [("FSC-A", "SSC-A"), ("CD45", "SSC-A"), ("CD3", "CD19"), ("CD4", "CD8"), ("CD34", "CD45"), ("CD19", "CD45")]
N_FILES = 80
EVENTS = 12000
SUBSAMPLE = 6000
GRID = 48
BATCH = 16
STEPS = 70
EPOCHS = 3


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def write_fcs(path, label, rng):
    p = len(CHANNELS)
    means = np.array([5e4, 2e4, 3e3, 800, 600, 400, 300, 100], float)
    pops = [(0.5, [1.0, 0.6, 1.2, 8, 6, 1, 1, 1]), (0.2, [1.0, 0.5, 1.2, 8, 1, 6, 1, 1]),
            (0.15, [1.1, 0.6, 1.0, 1, 1, 1, 9, 1]), (0.15, [1.6, 3.0, 0.6, 1, 1, 1, 1, 1])]
    if label == 1:
        pops[2] = (0.6, [1.3, 0.7, 0.9, 1, 1, 1, 14, 1])
    elif label == 2:
        pops[0] = (0.7, [1.2, 0.7, 1.3, 12, 10, 1, 1, 1])
    elif label == 3:
        pops.append((0.5, [0.9, 0.5, 0.4, 1, 1, 1, 2, 20]))
    w = np.array([q[0] for q in pops]); w /= w.sum()
    comp = rng.choice(len(pops), EVENTS, p=w)
    scale = np.array([q[1] for q in pops])[comp]
    data = means * scale * rng.lognormal(0, 0.35, (EVENTS, p))
    spill = np.eye(p)
    spill[2:, 2:] += rng.uniform(0, 0.08, (p - 2, p - 2)) * (1 - np.eye(p - 2))
    data = (data @ spill).astype(">f4")
    kw = {"$BYTEORD": "4,3,2,1", "$DATATYPE": "F", "$MODE": "L", "$NEXTDATA": "0", "$PAR": str(p),
          "$TOT": str(EVENTS), "$CYT": "SynthCyt 8", "$DATE": "05-DEC-2026"}
    for i, name in enumerate(CHANNELS, 1):
        kw["$P%dN" % i] = name
        kw["$P%dB" % i] = "32"
        kw["$P%dE" % i] = "0,0"
        kw["$P%dR" % i] = "262144"
    fl = CHANNELS[2:]
    kw["$SPILLOVER"] = ",".join([str(len(fl))] + fl + ["%.5f" % v for v in spill[2:, 2:].ravel()])
    payload = data.tobytes()

    def text_for(begin, end):
        k = dict(kw, **{"$BEGINDATA": str(begin), "$ENDDATA": str(end), "$BEGINSTEXT": "0", "$ENDSTEXT": "0",
                        "$BEGINANALYSIS": "0", "$ENDANALYSIS": "0"})
        return ("|" + "|".join("%s|%s" % kv for kv in k.items()) + "|").encode("ascii")

    text = text_for(0, 0)
    begin = 58 + len(text) + 64
    text = text_for(begin, begin + len(payload) - 1).ljust(begin - 58, b" ")
    header = b"FCS3.0    " + b"".join(str(v).rjust(8).encode() for v in
                                      (58, 58 + len(text) - 1, begin, begin + len(payload) - 1, 0, 0))
    with open(path, "wb") as f:
        f.write(header + text + payload)


def read_fcs(path):
    with open(path, "rb") as f:
        raw = f.read()
    t0, t1 = int(raw[10:18]), int(raw[18:26])
    text = raw[t0:t1 + 1].decode("ascii").rstrip()
    delim = text[0]
    toks = text[1:].split(delim)
    kw = {toks[i].upper(): toks[i + 1] for i in range(0, len(toks) - 1, 2)}
    p, n = int(kw["$PAR"]), int(kw["$TOT"])
    order = ">" if kw["$BYTEORD"].startswith("4") else "<"
    b0 = int(kw["$BEGINDATA"])
    data = np.frombuffer(raw, dtype=order + "f4", count=p * n, offset=b0).reshape(n, p).astype(np.float64)
    names = [kw["$P%dN" % (i + 1)] for i in range(p)]
    sp = kw["$SPILLOVER"].split(",")
    m = int(sp[0])
    fl, vals = sp[1:1 + m], np.array(sp[1 + m:], float).reshape(m, m)
    idx = [names.index(c) for c in fl]
    data[:, idx] = data[:, idx] @ np.linalg.inv(vals)
    return names, data


def sample_features(path, rng):
    names, data = read_fcs(path)
    data = data[rng.choice(len(data), SUBSAMPLE, replace=False)]
    scat = [names.index("FSC-A"), names.index("SSC-A")]
    tr = np.arcsinh(data / 150.0)
    tr[:, scat] = data[:, scat] / 262144.0 * 12.0
    img = np.empty((GRID, GRID, len(PAIRS)), np.float32)
    for k, (a, b) in enumerate(PAIRS):
        h, _, _ = np.histogram2d(tr[:, names.index(a)], tr[:, names.index(b)], bins=GRID, range=[[0, 12], [0, 12]])
        img[:, :, k] = np.log1p(h)
    return img / 5.0


def build_model():
    inp = keras.Input((GRID, GRID, len(PAIRS)))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(get_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = get_batch()
            loss = float(model.train_on_batch(x, y)[0])
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
        print("epoch %d loss %.4f" % (epoch + 1, loss))
    return float(np.mean(gaps[5:]))


def main():
    rng = np.random.default_rng(55)
    tmp = tempfile.mkdtemp(prefix="u55_input_fcs_trainonbatch_flowcytometry_")
    try:
        paths, labels = [], []
        for i in range(N_FILES):
            lab = i % 4
            p = os.path.join(tmp, "patient%03d_tube1.fcs" % i)
            write_fcs(p, lab, rng)
            paths.append(p)
            labels.append(lab)
        labels = np.array(labels, np.int32)
        srng = np.random.default_rng(7)

        def next_batch():
            pick = srng.integers(0, N_FILES, BATCH)
            return np.stack([sample_features(paths[i], srng) for i in pick]), labels[pick]

        fixed = next_batch()
        full = train(next_batch)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.1f ms/step" % (full * 1e3)
        if "--truth" in sys.argv:
            comp = train(lambda: fixed)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit({"truth_input_fraction": frac})
            msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
        print("input_fcs_trainonbatch_flowcytometry:", msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
