"""Sawmill grading: classify board-surface images into four lumber grades (clear, small
knots, large knots, split) from texture. Grayscale board patches are synthesised in memory;
for every batch the script computes 8-neighbour local binary pattern codes in numpy and
4x4-cell LBP histograms (the classic hand-crafted texture descriptor) and trains an MLP with
model.train_on_batch in a Python loop."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, SIZE, BATCH, STEPS, EPOCHS, N_IMG, CELLS = 48, 96, 32, 230, 3, 800, 4


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_boards(n):
    rng = np.random.default_rng(SEED)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    imgs = np.empty((n, SIZE, SIZE), np.float32)
    grades = (np.arange(n) % 4).astype(np.int32)
    for i in range(n):
        warp = 3 * np.sin(yy / rng.uniform(10, 25) + rng.uniform(0, 6))
        img = np.sin((xx + warp) * rng.uniform(0.4, 0.7)) + 0.4 * rng.standard_normal((SIZE, SIZE))
        g = grades[i]
        for _ in range(g if g < 3 else 1):
            cy, cx, r = rng.uniform(10, SIZE - 10), rng.uniform(10, SIZE - 10), rng.uniform(3, 5 + 4 * (g == 2))
            d = np.hypot(yy - cy, xx - cx)
            img += np.where(d < r, -2.0 + np.sin(d * 2.0), 0.0)
        if g == 3:
            col = rng.integers(10, SIZE - 10)
            img[:, col:col + 2] = -3.0
        imgs[i] = img
    return imgs, grades


OFFSETS = [(-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1)]


def lbp_histograms(img):
    c = img[1:-1, 1:-1]
    codes = np.zeros(c.shape, np.int32)
    h, w = c.shape
    for bit, (dy, dx) in enumerate(OFFSETS):
        nb = img[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
        codes |= (nb >= c).astype(np.int32) << bit
    feats = []
    ch, cw = h // CELLS, w // CELLS
    for i in range(CELLS):
        for j in range(CELLS):
            cell = codes[i * ch:(i + 1) * ch, j * cw:(j + 1) * cw]
            hist = np.bincount(cell.ravel(), minlength=256).astype(np.float32)
            feats.append(hist / hist.sum())
    # rotation-invariant summary: fold codes by minimum circular shift
    rot = np.array([min(((v >> k) | (v << (8 - k))) & 255 for k in range(8)) for v in range(256)])
    ri = np.bincount(rot[codes].ravel(), minlength=256).astype(np.float32)
    feats.append(ri / ri.sum())
    return np.concatenate(feats)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([keras.Input(((CELLS * CELLS + 1) * 256,)),
                          keras.layers.Dense(384, activation="relu"),
                          keras.layers.Dropout(0.2),
                          keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(4, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(model, batch_fn):
    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batch_fn(epoch, s)
            out = model.train_on_batch(x, y)
            loss = float(out[0])
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return sum(g) / len(g), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_input_lbp_trainonbatch_woodgrain_")
    try:
        imgs, grades = make_boards(N_IMG)
        order = np.random.default_rng(SEED).permutation(N_IMG)

        def batch_fn(epoch, s):
            start = ((epoch * STEPS + s) * BATCH) % (N_IMG - BATCH)
            idx = order[start:start + BATCH]
            return np.stack([lbp_histograms(imgs[i]) for i in idx]), grades[idx]

        full, loss = train(build_model(), batch_fn)
        emit("steps_per_second", 1.0 / full)
        msg = f"lbp woodgrain: loss={loss:.4f} step={full*1000:.1f}ms main_wall={time.perf_counter()-T0:.1f}s"
        if truth:
            fixed = batch_fn(0, 0)
            comp, _ = train(build_model(), lambda e, s: fixed)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
