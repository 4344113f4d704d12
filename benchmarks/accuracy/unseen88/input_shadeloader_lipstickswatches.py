"""Lipstick swatch photos -> shade family (nude, coral, berry, red, plum, ...).

Swatch photos (uint8, 96x96 RGB, lip-shaped ellipse on skin background) are
held in memory.  A keras.utils.PyDataset (workers=1) crops, gray-world white
balances, linearises sRGB and converts each photo to CIE Lab in NumPy.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


BATCH, STEPS, EPOCHS, CROP = 48, 60, 3, 64
N_PHOTOS, N_SHADES = 360, 8
SHADES = np.array([[196, 140, 120], [232, 110, 90], [130, 30, 70], [190, 20, 35],
                   [110, 40, 90], [220, 120, 150], [150, 70, 50], [90, 20, 30]], np.float32)
RGB2XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]], np.float32)
WHITE = np.array([0.9505, 1.0, 1.089], np.float32)


def make_photos(n, seed=88):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:96, 0:96].astype(np.float32)
    photos = np.empty((n, 96, 96, 3), np.uint8)
    labels = rng.integers(0, N_SHADES, n).astype(np.int32)
    for i in range(n):
        skin = np.array([225, 185, 160], np.float32) * rng.uniform(0.7, 1.05)
        cx, cy = rng.uniform(38, 58, 2)
        mask = ((xx - cx) / rng.uniform(20, 30)) ** 2 + ((yy - cy) / rng.uniform(8, 14)) ** 2 < 1
        img = np.where(mask[..., None], SHADES[labels[i]], skin)
        img = img * rng.uniform(0.8, 1.2, 3) + rng.normal(0, 6, img.shape)
        photos[i] = np.clip(img, 0, 255).astype(np.uint8)
    return photos, labels


def to_lab(img):
    rgb = img.astype(np.float32) / 255.0
    rgb = rgb / (rgb.reshape(-1, 3).mean(0) / rgb.mean() + 1e-6)  # gray-world balance
    rgb = np.clip(rgb, 0, 1)
    lin = np.where(rgb <= 0.04045, rgb / 12.92, np.power((rgb + 0.055) / 1.055, 2.4))
    xyz = lin @ RGB2XYZ.T / WHITE
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    L = 116 * f[..., 1] - 16
    Lp = np.pad(L, 1, mode="edge")  # 3x3 median denoise of lightness (sensor noise)
    L = np.median(sliding_window_view(Lp, (3, 3)).reshape(L.shape[0], L.shape[1], 9), axis=-1)
    a = 500 * (f[..., 0] - f[..., 1])
    b = 200 * (f[..., 1] - f[..., 2])
    return np.stack([L / 100, a / 100, b / 100], -1).astype(np.float32)


class SwatchPhotos(keras.utils.PyDataset):
    def __init__(self, photos, labels, **kw):
        super().__init__(**kw)
        self.photos, self.labels = photos, labels

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        rng = np.random.default_rng(1000 + idx)
        pick = rng.integers(0, len(self.photos), BATCH)
        xs = []
        for i in pick:
            oy, ox = rng.integers(0, 96 - CROP, 2)
            img = self.photos[i, oy:oy + CROP, ox:ox + CROP]
            if rng.random() < 0.5:
                img = img[:, ::-1]
            xs.append(to_lab(img))
        return np.stack(xs), self.labels[pick]


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((CROP, CROP, 3))
    h = layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(inp)
    h = layers.Conv2D(48, 3, strides=2, padding="same", activation="relu")(h)
    h = layers.Conv2D(96, 3, strides=2, padding="same", activation="relu")(h)
    h = layers.GlobalAveragePooling2D()(h)
    out = layers.Dense(N_SHADES)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(data):
    model = build_model()
    timer = StepTimer()
    if isinstance(data, tf.data.Dataset):
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


PHOTOS, LABELS = make_photos(N_PHOTOS)
loader = SwatchPhotos(PHOTOS, LABELS, workers=1, use_multiprocessing=False)
full = train(loader)
emit({"steps_per_second": 1.0 / full})
print(f"[lipstickswatches] {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step) wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = loader[0]
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[lipstickswatches] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
