"""Character recognition for digitised parish-register handwriting.

Clean glyph crops are synthesised once as stroke images; every training batch
is built in Python with Simard-style elastic deformation (random displacement
fields smoothed by separable Gaussian np.convolve, then bilinear resampling in
numpy) plus ink-thickness jitter, and fed to a CNN with model.train_on_batch.
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
from keras import layers

N_GLYPHS = 1000
SIZE = 40
N_CLASSES = 26
BATCH = 32
STEPS = 450
ALPHA, SIGMA = 6.0, 4.0


def make_glyphs(rng):
    protos = rng.uniform(4, SIZE - 4, (N_CLASSES, 5, 2))
    imgs = np.zeros((N_GLYPHS, SIZE, SIZE), np.float32)
    y = rng.integers(0, N_CLASSES, N_GLYPHS).astype(np.int32)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    for i in range(N_GLYPHS):
        pts = protos[y[i]] + rng.normal(0, 1.2, (5, 2))
        for a, b in zip(pts[:-1], pts[1:]):
            for t in np.linspace(0, 1, 24):
                p = a + t * (b - a)
                imgs[i] = np.maximum(imgs[i], np.exp(-((xx - p[0]) ** 2 + (yy - p[1]) ** 2) / 2.0))
    return imgs, y


def gaussian_kernel(sigma):
    r = int(3 * sigma)
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    return k / k.sum()


KERNEL = gaussian_kernel(SIGMA)


def smooth(field):
    field = np.apply_along_axis(lambda r: np.convolve(r, KERNEL, mode="same"), 0, field)
    return np.apply_along_axis(lambda r: np.convolve(r, KERNEL, mode="same"), 1, field)


def elastic(img, rng):
    dx = smooth(rng.uniform(-1, 1, img.shape)) * ALPHA * 8
    dy = smooth(rng.uniform(-1, 1, img.shape)) * ALPHA * 8
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    sx = np.clip(xx + dx, 0, SIZE - 1.001)
    sy = np.clip(yy + dy, 0, SIZE - 1.001)
    x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
    fx, fy = sx - x0, sy - y0
    out = (img[y0, x0] * (1 - fx) * (1 - fy) + img[y0, x0 + 1] * fx * (1 - fy)
           + img[y0 + 1, x0] * (1 - fx) * fy + img[y0 + 1, x0 + 1] * fx * fy)
    gamma = rng.uniform(0.6, 1.6)  # ink thickness / fading
    return np.power(np.clip(out, 0, 1), gamma).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(21)
    inp = keras.Input((SIZE, SIZE, 1))
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    m = keras.Model(inp, layers.Dense(N_CLASSES)(x))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(batches):
    model = build_model()
    stamps = []
    loss = 0.0
    for i in range(STEPS):
        x, y = batches(i)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_input_elasticdeform_trainonbatch_archivehandwriting_")
    try:
        rng = np.random.default_rng(4343)
        imgs, labels = make_glyphs(rng)
        aug_rng = np.random.default_rng(0)

        def augmented(i):
            idx = aug_rng.integers(0, N_GLYPHS, BATCH)
            x = np.stack([elastic(imgs[k], aug_rng) for k in idx])[..., None]
            return x, labels[idx]

        full, loss = train(augmented)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"register glyphs: {1.0 / full:.2f} steps/s, loss {loss:.3f}"
        if truth:
            fixed = augmented(0)
            comp, _ = train(lambda i: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
