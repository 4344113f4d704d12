"""Chromatin-state classification from ChIP-seq coverage: each sample is a
4096-bp window of read coverage for three histone marks, kept in a gzip'd
bedGraph-like text file.  A Python loop reads the records, folds each
1024-bin track onto a 32x32 image along a Hilbert curve (numpy d2xy,
recomputed per track), and trains a small CNN with train_on_batch."""
import os, sys, json, time, gzip, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, NWIN, SIDE, MARKS, NCLS = 32, 250, 1024, 32, 3, 4


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def d2xy(n, d):
    d = np.asarray(d, np.int64)
    x = np.zeros_like(d); y = np.zeros_like(d)
    s, t = 1, d.copy()
    while s < n:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        flip = (ry == 0) & (rx == 1)
        x = np.where(flip, s - 1 - x, x); y = np.where(flip, s - 1 - y, y)
        swap = ry == 0
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        x = x + s * rx; y = y + s * ry
        t = t // 4; s *= 2
    return x, y


def write_tracks(path, rng):
    labels = rng.integers(0, NCLS, NWIN)
    with gzip.open(path, "wt") as f:
        for w in range(NWIN):
            lab = labels[w]
            for m in range(MARKS):
                lam = 2.0 + 6.0 * (lab == m) + 3.0 * (lab == 3)
                cov = rng.poisson(lam * (1 + np.sin(np.arange(SIDE * SIDE) / (40.0 + 30 * m))), SIDE * SIDE)
                f.write("chr%d\t%d\t%d\tH3K%d\t%d\t%s\n" % (w % 22 + 1, w * 4096, w * 4096 + 4096,
                                                          [4, 27, 36][m], lab, ",".join(map(str, cov))))
    return labels


def load_window(lines):
    img = np.zeros((SIDE, SIDE, MARKS), np.float32)
    lab = 0
    for m, line in enumerate(lines):
        parts = line.rstrip("\n").split("\t")
        lab = int(parts[4])
        vals = np.array([float(v) for v in parts[5].split(",")], np.float32)
        x, y = d2xy(SIDE, np.arange(vals.size))
        img[y, x, m] = vals
    return np.log1p(img), lab


def batches(path):
    rng = np.random.default_rng(2)
    while True:
        with gzip.open(path, "rt") as f:
            lines = f.readlines()
        order = rng.permutation(NWIN)
        for b in range(0, NWIN - BATCH + 1, BATCH):
            xs, ys = zip(*(load_window(lines[i * MARKS:(i + 1) * MARKS]) for i in order[b:b + BATCH]))
            yield np.stack(xs), np.array(ys, np.int32)


def build():
    keras.utils.set_random_seed(3)
    m = keras.Sequential([keras.Input((SIDE, SIDE, MARKS)),
                          keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
                          keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
                          keras.layers.MaxPooling2D(), keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
                          keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(NCLS)])
    m.compile(keras.optimizers.Adam(1e-3),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def train(model, it):
    times, loss = [], 0.0
    for step in range(STEPS):
        xb, yb = next(it)
        out = model.train_on_batch(xb, yb)
        loss = float(out[0])
        times.append(time.perf_counter())
    gaps = np.diff(times)
    return float(np.mean(gaps[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_input_hilbertcurve_trainonbatch_chromatin_")
    try:
        rng = np.random.default_rng(46)
        path = os.path.join(tmp, "coverage.bedgraph.gz")
        write_tracks(path, rng)
        t0 = time.perf_counter()
        it = batches(path)
        full, loss = train(build(), it)
        emit("steps_per_second", 1.0 / full)
        msg = "loss=%.4f sec/step=%.4f" % (loss, full)
        if truth:
            xb, yb = next(it)
            def same():
                while True:
                    yield xb, yb
            comp, _ = train(build(), same())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("input_hilbertcurve_trainonbatch_chromatin: %s wall_train=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
