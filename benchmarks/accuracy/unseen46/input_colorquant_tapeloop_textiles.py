"""Weave-defect screening for a textile mill: fabric swatches are stored as
PNG photos on disk.  A Python loader opens each PNG with PIL, reduces it to a
16-colour median-cut palette (Image.quantize), and builds a 64x64 palette-
index map plus a palette co-occurrence matrix; batches feed a @tf.function
GradientTape step in a Python loop."""
import os, sys, json, time, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from PIL import Image
import tensorflow as tf
import keras

BATCH, STEPS, NIMG, SIZE, K = 32, 80, 600, 160, 16


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def write_swatches(folder, rng):
    labels = []
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    for k in range(NIMG):
        defect = k % 2
        period = rng.integers(5, 11)
        warp = (np.sin(xx * 2 * np.pi / period) > 0)
        weft = (np.sin(yy * 2 * np.pi / period + rng.uniform(0, 6)) > 0)
        base = np.where(warp ^ weft, 1.0, 0.55)[..., None] * rng.uniform(80, 230, 3)
        if defect:
            r0 = rng.integers(10, SIZE - 30)
            base[r0:r0 + rng.integers(3, 9)] *= rng.uniform(0.4, 0.8)
        img = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        Image.fromarray(img).save(os.path.join(folder, "sw%05d.png" % k))
        labels.append(defect)
    return np.array(labels, np.float32)


def load(path):
    im = Image.open(path).convert("RGB").resize((64, 64), Image.BILINEAR)
    q = im.quantize(colors=K, method=Image.Quantize.MEDIANCUT)
    idx = np.asarray(q, np.int64)
    pal = np.array(q.getpalette()[:3 * K], np.float32).reshape(K, 3) / 255.0
    co = np.zeros((K, K), np.float32)
    np.add.at(co, (idx[:, :-1].ravel(), idx[:, 1:].ravel()), 1.0)
    np.add.at(co, (idx[:-1, :].ravel(), idx[1:, :].ravel()), 1.0)
    co /= co.sum()
    img = np.concatenate([pal[idx], (idx / (K - 1.0))[..., None]], -1).astype(np.float32)
    return img, co[..., None]


def batches(paths, labels):
    rng = np.random.default_rng(4)
    while True:
        order = rng.permutation(len(paths))
        for b in range(0, len(paths) - BATCH + 1, BATCH):
            sel = order[b:b + BATCH]
            imgs, cos = zip(*(load(paths[i]) for i in sel))
            yield np.stack(imgs), np.stack(cos), labels[sel]


def build():
    keras.utils.set_random_seed(9)
    a = keras.Input((64, 64, 4)); c = keras.Input((K, K, 1))
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(a)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    g = keras.layers.Flatten()(keras.layers.Conv2D(8, 3, padding="same", activation="relu")(c))
    out = keras.layers.Dense(1)(keras.layers.Concatenate()([h, g]))
    return keras.Model([a, c], out)


def train(model, it):
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, c, y):
        with tf.GradientTape() as tape:
            loss = lossf(y[:, None], model([x, c], training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times, loss = [], 0.0
    for s in range(STEPS):
        x, c, y = next(it)
        loss = float(step(x, c, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u46_input_colorquant_tapeloop_textiles_")
    try:
        rng = np.random.default_rng(46)
        labels = write_swatches(tmp, rng)
        paths = [os.path.join(tmp, "sw%05d.png" % k) for k in range(NIMG)]
        t0 = time.perf_counter()
        it = batches(paths, labels)
        full, loss = train(build(), it)
        emit("steps_per_second", 1.0 / full)
        msg = "loss=%.4f sec/step=%.4f" % (loss, full)
        if truth:
            fixed = next(it)
            def same():
                while True:
                    yield fixed
            comp, _ = train(build(), same())
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += " compute=%.4f truth=%.3f" % (comp, frac)
        print("input_colorquant_tapeloop_textiles: %s wall_train=%.1fs" % (msg, time.perf_counter() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
