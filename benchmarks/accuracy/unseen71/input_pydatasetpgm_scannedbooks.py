"""Scanned-book page layout classification from raw PGM (P5) page scans.

Bottleneck (input): a keras.utils.PyDataset decodes each PGM byte string in Python,
estimates and undoes the scan skew row by row, binarises with an Otsu threshold and
random-crops, one page at a time inside __getitem__, feeding model.fit a small CNN.
"""
import time
WALL_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SCRIPT = os.path.splitext(os.path.basename(__file__))[0]
_ap = argparse.ArgumentParser()
_ap.add_argument("--truth", action="store_true",
                 help="after the normal run, rerun on one reused batch and report truth_input_fraction")
ARGS = _ap.parse_args()


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps, skip=5):
    g = gaps[skip:] if len(gaps) > skip else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


def finish(full_sec, compute_sec=None, extra=""):
    emit({"steps_per_second": 1.0 / full_sec})
    line = f"[{SCRIPT}] sec/step={full_sec:.4f} steps/s={1.0 / full_sec:.2f}"
    if compute_sec is not None:
        f = truth_fraction(full_sec, compute_sec)
        emit({"truth_input_fraction": f})
        line += f" compute_sec/step={compute_sec:.4f} truth_input_fraction={f:.3f}"
    line += f" wall={time.perf_counter() - WALL_T0:.1f}s" + (" " + extra if extra else "")
    print(line, flush=True)


keras.utils.set_random_seed(71)


PAGE = 112
CROP = 64
BATCH = 64
STEPS = 20
EPOCHS = 3
POOL = 128
N_CLASSES = 4   # single column, two columns, index/table, illustration plate


def render_page(rng, cls):
    img = np.full((PAGE, PAGE), 235, np.float32)
    cols = {0: [(8, PAGE - 8)], 1: [(8, PAGE // 2 - 4), (PAGE // 2 + 4, PAGE - 8)],
            2: [(8, 30), (34, 70), (74, PAGE - 8)], 3: [(8, PAGE - 8)]}[cls]
    for y in range(6, PAGE - 6, 5 if cls != 2 else 7):
        for a, b in cols:
            end = b - int(rng.integers(0, 12))
            img[y:y + 2, a:end] = 40
    if cls == 3:
        img[20:80, 20:PAGE - 20] = rng.uniform(30, 200, (60, PAGE - 40))
    img += rng.normal(0, 12, img.shape)
    skew = rng.uniform(-0.08, 0.08)
    for r in range(PAGE):
        img[r] = np.roll(img[r], int(round(skew * (r - PAGE / 2))))
    pix = np.clip(img, 0, 255).astype(np.uint8)
    return b"P5\n%d %d\n255\n" % (PAGE, PAGE) + pix.tobytes()


def decode_pgm(raw):
    parts = raw.split(b"\n", 3)
    assert parts[0] == b"P5"
    w, h = map(int, parts[1].split())
    return np.frombuffer(parts[3], np.uint8, count=w * h).reshape(h, w).astype(np.float32)


def otsu(img):
    hist, _ = np.histogram(img, bins=256, range=(0, 256))
    p = hist / hist.sum()
    omega = np.cumsum(p)
    mu = np.cumsum(p * np.arange(256))
    sigma_b = (mu[-1] * omega - mu) ** 2 / (omega * (1 - omega) + 1e-9)
    return int(np.argmax(sigma_b))


ROWS = np.arange(PAGE)[:, None]
COLS = np.arange(PAGE)[None, :]
N_ANGLES = 2            # skew hypotheses scored per page: the Python load knob


def shear(img, s):
    shifts = np.rint(s * (np.arange(PAGE) - PAGE / 2)).astype(np.int64)
    return img[ROWS, (COLS + shifts[:, None]) % PAGE]


def deskew(img):
    ink = (img < 128).astype(np.float32)
    scores = [float(np.var(shear(ink, s).sum(axis=1))) for s in np.linspace(-0.08, 0.08, N_ANGLES)]
    return shear(img, np.linspace(-0.08, 0.08, N_ANGLES)[int(np.argmax(scores))])


class PageScans(keras.utils.PyDataset):
    def __init__(self, steps, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(N_CLASSES, size=POOL)
        self.scans = [render_page(rng, int(c)) for c in self.labels]
        self.steps = steps
        self.rng = np.random.default_rng(seed + 1)

    def __len__(self):
        return self.steps

    def __getitem__(self, idx):
        x = np.empty((BATCH, CROP, CROP, 1), np.float32)
        y = np.empty((BATCH,), np.int32)
        for i in range(BATCH):
            k = int(self.rng.integers(POOL))
            img = deskew(decode_pgm(self.scans[k]))
            binar = (img < otsu(img)).astype(np.float32)
            oy, ox = self.rng.integers(0, PAGE - CROP, size=2)
            x[i, :, :, 0] = binar[oy:oy + CROP, ox:ox + CROP]
            y[i] = self.labels[k]
        return x, y


def build_model():
    m = keras.Sequential([keras.Input((CROP, CROP, 1)),
                          keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
                          keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(N_CLASSES)])
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(data):
    model = build_model()
    timer = StepTimer()
    if isinstance(data, PageScans):
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


full = run(PageScans(STEPS, 71))
compute = None
if ARGS.truth:
    batch = PageScans(1, 72)[0]
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
finish(full, compute)
