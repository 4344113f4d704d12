"""Arts: classifying painting style (impasto, pointillist, wash, hard-edge) for a gallery catalogue.
Each step a Python loop paints a batch of synthetic canvases with PIL.ImageDraw brush strokes,
converts them to HSV, computes per-channel colour histograms and a downsampled thumbnail, and
feeds the pair to a two-input Keras model with model.train_on_batch."""
import os, sys, time, json, tempfile, shutil
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from PIL import Image, ImageDraw, ImageFilter
import tensorflow as tf
import keras

BATCH, STEPS, CANVAS, THUMB, STROKES, STYLES = 32, 140, 160, 32, 70, 4

def emit(d):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(d) + "\n")

def paint(rng, style):
    img = Image.new("RGB", (CANVAS, CANVAS), tuple(int(v) for v in rng.integers(0, 255, 3)))
    d = ImageDraw.Draw(img)
    for _ in range(STROKES):
        c = tuple(int(v) for v in rng.integers(0, 255, 3))
        x, y = (int(v) for v in rng.integers(0, CANVAS, 2))
        if style == 0:
            d.line([(x, y), (x + int(rng.integers(-40, 40)), y + int(rng.integers(-40, 40)))], fill=c, width=int(rng.integers(6, 14)))
        elif style == 1:
            for _ in range(6):
                px, py = x + int(rng.integers(-12, 12)), y + int(rng.integers(-12, 12))
                d.ellipse([px, py, px + 3, py + 3], fill=c)
        elif style == 2:
            d.ellipse([x - 25, y - 25, x + 25, y + 25], fill=c)
        else:
            d.rectangle([x, y, x + int(rng.integers(10, 50)), y + int(rng.integers(10, 50))], fill=c)
    if style == 2:
        img = img.filter(ImageFilter.GaussianBlur(4))
    return img

def features(img):
    hsv = np.asarray(img.convert("HSV"))
    hist = np.concatenate([np.histogram(hsv[..., ch], bins=32, range=(0, 256))[0] for ch in range(3)]).astype(np.float32)
    hist /= hist.sum()
    thumb = np.asarray(img.resize((THUMB, THUMB), Image.LANCZOS), np.float32) / 255.0
    return hist, thumb

def make_batch(rng):
    ys = rng.integers(0, STYLES, BATCH)
    hs, ts = zip(*(features(paint(rng, int(s))) for s in ys))
    return np.stack(hs), np.stack(ts), ys.astype(np.int32)

def build_model():
    hin = keras.Input((96,)); tin = keras.Input((THUMB, THUMB, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(tin)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    h = keras.layers.Dense(64, activation="relu")(hin)
    out = keras.layers.Dense(STYLES, activation="softmax")(keras.layers.Concatenate()([x, h]))
    m = keras.Model([hin, tin], out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m

def train(batches):
    model = build_model(); times = []
    for i in range(STEPS):
        h, t, y = batches(i)
        loss = float(model.train_on_batch([h, t], y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss

def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u49_input_brushstroke_hsvhist_trainonbatch_artstyle_")
    try:
        rng = np.random.default_rng(49); tf.random.set_seed(49); keras.utils.set_random_seed(49)
        full, loss = train(lambda i: make_batch(rng))
        emit({"steps_per_second": 1.0 / full})
        msg = "art style: %.4f s/step, loss %.3f" % (full, loss)
        if truth:
            fixed = make_batch(np.random.default_rng(1))
            comp, _ = train(lambda i: fixed)
            f = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": f})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, f)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
