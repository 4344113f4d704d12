import time
WALL0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Crop-type mapping from multispectral field patches.

Raw 12-bit Sentinel-2-like patches (uint16, 6 bands) sit in memory. A tf.data
pipeline maps tf.numpy_function over patch indices: the Python function
rescales digital numbers to reflectance, masks clouds per pixel, fills masked
pixels with per-band medians, computes NDVI/EVI/NDWI indices, applies a random
rot90/flip and a 3x3 box smoothing written with numpy slicing, then model.fit
trains a small CNN. Bottleneck: the serial tf.numpy_function map.
"""
SEED = 58
BATCH = 32
STEPS = 40
EPOCHS = 3
PATCH = 32
BANDS = 6  # blue, green, red, nir, swir1, swir2
N_PATCHES = 800
N_CLASSES = 7

rng = np.random.default_rng(SEED)
RAW = rng.integers(200, 4095, (N_PATCHES, PATCH, PATCH, BANDS)).astype(np.uint16)
LABELS = rng.integers(0, N_CLASSES, N_PATCHES).astype(np.int32)


def box3(a):
    p = np.pad(a, ((1, 1), (1, 1), (0, 0)), mode="edge")
    out = np.zeros_like(a)
    for dy in range(3):
        for dx in range(3):
            out += p[dy:dy + a.shape[0], dx:dx + a.shape[1]]
    return out / 9.0


def prepare(idx):
    i = int(idx)
    r = np.random.default_rng(SEED + i * 7919)
    dn = RAW[i].astype(np.float64)
    refl = dn / 4095.0 * 0.6
    # per-pixel cloud test (bright blue & high swir) written as a Python loop over rows
    mask = np.zeros((PATCH, PATCH), bool)
    for y in range(PATCH):
        for x in range(PATCH):
            px = refl[y, x]
            mask[y, x] = px[0] > 0.5 and px[4] > 0.3 and px[3] < 0.9
    for b in range(BANDS):
        band = refl[:, :, b]
        med = np.median(band[~mask]) if (~mask).any() else 0.1
        band[mask] = med
    blue, green, red, nir, swir1 = (refl[:, :, k] for k in range(5))
    ndvi = (nir - red) / (nir + red + 1e-6)
    evi = 2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + 1.0)
    ndwi = (green - nir) / (green + nir + 1e-6)
    ndmi = (nir - swir1) / (nir + swir1 + 1e-6)
    feat = np.concatenate([refl, np.stack([ndvi, evi, ndwi, ndmi], -1)], -1)
    feat = box3(feat)
    k = int(r.integers(0, 4))
    feat = np.rot90(feat, k)
    if r.random() < 0.5:
        feat = feat[:, ::-1]
    feat = (feat - feat.mean(axis=(0, 1))) / (feat.std(axis=(0, 1)) + 1e-6)
    return np.ascontiguousarray(feat, dtype=np.float32), LABELS[i]


def tf_prepare(idx):
    x, y = tf.numpy_function(prepare, [idx], (tf.float32, tf.int32))
    x.set_shape((PATCH, PATCH, BANDS + 4))
    y.set_shape(())
    return x, y


def make_ds():
    idx = tf.data.Dataset.range(N_PATCHES).shuffle(N_PATCHES, seed=SEED).repeat()
    return idx.map(tf_prepare).batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((PATCH, PATCH, BANDS + 4))
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print(f"input_ndviclouds_numpyfn_cropfields: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    emit_truth(full, compute)
