"""Handwritten check-amount digit recognition for a bank's cheque-clearing pipeline.
Clean 40x40 digit glyphs are rendered once with PIL; every training step re-distorts each glyph
with Simard-style elastic deformation done in numpy (random displacement fields, separable
Gaussian smoothing, bilinear resampling) plus a random affine shear, and the batch goes to
model.train_on_batch in a plain Python loop.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
from PIL import Image, ImageDraw, ImageFont
import tensorflow as tf
import keras

SEED = 44
BATCH = 64
STEPS = 300
SIZE = 40
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


def render_glyphs(rng, per_class=30):
    font = ImageFont.load_default()
    xs, ys = [], []
    for d in range(10):
        for _ in range(per_class):
            im = Image.new("L", (SIZE // 2, SIZE // 2), 0)
            dr = ImageDraw.Draw(im)
            dr.text((5 + int(rng.integers(-2, 3)), 3 + int(rng.integers(-2, 3))), str(d), fill=255, font=font)
            im = im.resize((SIZE, SIZE), Image.BILINEAR)
            xs.append(np.asarray(im, np.float32) / 255.0)
            ys.append(d)
    return np.stack(xs), np.array(ys, np.int32)


def gaussian_kernel(sigma):
    r = int(3 * sigma)
    t = np.arange(-r, r + 1)
    k = np.exp(-t ** 2 / (2 * sigma ** 2))
    return k / k.sum()


KERNEL = gaussian_kernel(4.0)


def smooth(field):
    out = np.apply_along_axis(lambda v: np.convolve(v, KERNEL, mode="same"), 0, field)
    return np.apply_along_axis(lambda v: np.convolve(v, KERNEL, mode="same"), 1, out)


def bilinear(img, yy, xx):
    yy = np.clip(yy, 0, SIZE - 1.001)
    xx = np.clip(xx, 0, SIZE - 1.001)
    y0, x0 = yy.astype(np.int64), xx.astype(np.int64)
    fy, fx = yy - y0, xx - x0
    return (img[y0, x0] * (1 - fy) * (1 - fx) + img[y0 + 1, x0] * fy * (1 - fx)
            + img[y0, x0 + 1] * (1 - fy) * fx + img[y0 + 1, x0 + 1] * fy * fx)


def elastic(img, rng, alpha=34.0):
    dx = smooth(rng.uniform(-1, 1, img.shape)) * alpha
    dy = smooth(rng.uniform(-1, 1, img.shape)) * alpha
    gy, gx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    shear = rng.normal(0, 0.15)
    return bilinear(img, gy + dy, gx + dx + shear * (gy - SIZE / 2)).astype(np.float32)


def augment_batch(glyphs, labels, idx, rng):
    x = np.stack([elastic(glyphs[i], rng) for i in idx])[..., None]
    return x, labels[idx]


def build_model():
    m = keras.Sequential([
        keras.Input((SIZE, SIZE, 1)),
        keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu", padding="same"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10, activation="softmax")])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(glyphs, labels, fixed):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    rng = np.random.default_rng(SEED)
    times, loss = [], 0.0
    for s in range(STEPS):
        if fixed is None:
            x, y = augment_batch(glyphs, labels, rng.integers(0, len(labels), BATCH), rng)
        else:
            x, y = fixed
        loss = float(model.train_on_batch(x, y)[0])
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_input_elasticdeform_trainonbatch_handwriting_")
    try:
        glyphs, labels = render_glyphs(np.random.default_rng(SEED))
        full, loss = train(glyphs, labels, None)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            r = np.random.default_rng(SEED + 1)
            fixed = augment_batch(glyphs, labels, r.integers(0, len(labels), BATCH), r)
            comp, _ = train(glyphs, labels, fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("input_elasticdeform_trainonbatch_handwriting: loss %.4f, %s" % (loss, msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
