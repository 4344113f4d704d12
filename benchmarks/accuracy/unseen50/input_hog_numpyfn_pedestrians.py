"""Pedestrian vs. background crop classification for a roadside camera.
Synthetic 128x64 grayscale crops (a person-like silhouette or clutter) live in memory as
uint8 arrays; a serial tf.data map calls tf.numpy_function to compute Histogram-of-Oriented-
Gradients descriptors (8x8 cells, 9 bins, 2x2 block L2-Hys normalisation) per crop, and the
batched descriptors feed an MLP through model.fit.
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

SEED = 50
N_CROPS = 3000
H, W = 128, 64
CELL = 8
BINS = 9
BATCH = 32
STEPS = 50
EPOCHS = 2
N_FEAT = ((H // CELL) - 1) * ((W // CELL) - 1) * 4 * BINS


class StepTimer(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(obj):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(obj) + "\n")


def make_crops(rng):
    yy, xx = np.mgrid[0:H, 0:W]
    imgs = np.empty((N_CROPS, H, W), np.uint8)
    labels = (np.arange(N_CROPS) % 2).astype(np.float32)
    for i in range(N_CROPS):
        img = rng.normal(110, 25, (H, W))
        if labels[i]:
            cx = W / 2 + rng.normal(0, 3)
            head = ((xx - cx) ** 2 + (yy - 20) ** 2) < 60
            torso = (np.abs(xx - cx) < 10) & (yy > 28) & (yy < 80)
            legs = (np.abs(np.abs(xx - cx) - 6) < 4) & (yy >= 80) & (yy < 120)
            img[head | torso | legs] -= 60
        else:
            for _ in range(4):
                x0, y0 = rng.integers(0, W - 16), rng.integers(0, H - 16)
                img[y0:y0 + rng.integers(6, 16), x0:x0 + rng.integers(6, 16)] += rng.normal(0, 50)
        imgs[i] = np.clip(img, 0, 255).astype(np.uint8)
    return imgs, labels


def hog(img):
    g = img.astype(np.float32) / 255.0
    gx = np.zeros_like(g)
    gy = np.zeros_like(g)
    gx[:, 1:-1] = g[:, 2:] - g[:, :-2]
    gy[1:-1, :] = g[2:, :] - g[:-2, :]
    mag = np.hypot(gx, gy)
    ang = (np.degrees(np.arctan2(gy, gx)) % 180.0)
    cy, cx = H // CELL, W // CELL
    hist = np.zeros((cy, cx, BINS), np.float32)
    for i in range(cy):
        for j in range(cx):
            a = ang[i * CELL:(i + 1) * CELL, j * CELL:(j + 1) * CELL].ravel()
            m = mag[i * CELL:(i + 1) * CELL, j * CELL:(j + 1) * CELL].ravel()
            pos = a / (180.0 / BINS) - 0.5
            lo = np.floor(pos).astype(np.int64)
            frac = pos - lo
            hist[i, j] += np.bincount(lo % BINS, m * (1 - frac), BINS)
            hist[i, j] += np.bincount((lo + 1) % BINS, m * frac, BINS)
    blocks = []
    for i in range(cy - 1):
        for j in range(cx - 1):
            v = hist[i:i + 2, j:j + 2].ravel()
            v = v / np.sqrt((v ** 2).sum() + 1e-6)
            v = np.minimum(v, 0.2)
            v = v / np.sqrt((v ** 2).sum() + 1e-6)
            blocks.append(v)
    return np.concatenate(blocks).astype(np.float32)


def hog_map(img, label):
    feat = tf.numpy_function(hog, [img], tf.float32)
    feat.set_shape((N_FEAT,))
    return feat, label


def make_model():
    inp = keras.Input((N_FEAT,))
    x = keras.layers.Dense(1536, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    return m


def main():
    truth = "--truth" in sys.argv
    keras.utils.set_random_seed(SEED)
    tmp = tempfile.mkdtemp(prefix="u50_input_hog_numpyfn_pedestrians_")
    try:
        imgs, labels = make_crops(np.random.default_rng(SEED))
        ds = (tf.data.Dataset.from_tensor_slices((imgs, labels))
              .shuffle(N_CROPS, seed=SEED).repeat()
              .map(hog_map)
              .batch(BATCH).prefetch(1))
        model = make_model()
        timer = StepTimer()
        hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
        full = timer.seconds_per_step()
        emit({"steps_per_second": 1.0 / full})
        msg = f"loss={hist.history['loss'][-1]:.4f} s/step={full:.4f}"
        if truth:
            xb, yb = next(iter(ds))
            one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            model2 = make_model()
            timer2 = StepTimer()
            model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
            comp = timer2.seconds_per_step()
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f" compute_s/step={comp:.4f} truth_input_fraction={frac:.3f}"
        print(f"input_hog_numpyfn_pedestrians: {msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
