"""Materials science: classify the crystal system of powder X-ray diffraction scans.

Raw detector counts (4096 two-theta bins with an amorphous background hump and
Poisson noise) are held as integer arrays in a tf.data pipeline; a serial
.map(tf.numpy_function) step does rolling-minimum background removal,
Savitzky-Golay smoothing, peak picking and downsampling per scan before
model.fit trains a Conv1D classifier.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 747
N_SCANS = 2400
NPTS = 4096
OUT = 1024
CLASSES = 7
BATCH = 32
STEPS = 100
EPOCHS = 3


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def synth_scans(rng):
    tth = np.linspace(10.0, 80.0, NPTS)
    base_peaks = [np.sort(rng.uniform(12, 78, 6 + 2 * c)) for c in range(CLASSES)]
    labels = rng.integers(0, CLASSES, N_SCANS)
    scans = np.empty((N_SCANS, NPTS), np.int32)
    for i, c in enumerate(labels):
        scale = rng.uniform(0.97, 1.03)
        pos = base_peaks[c] * scale
        amp = rng.uniform(200, 2000, len(pos))
        width = rng.uniform(0.08, 0.25)
        sig = (amp[:, None] * np.exp(-0.5 * ((tth[None] - pos[:, None]) / width) ** 2)).sum(0)
        bg = 300 * np.exp(-0.5 * ((tth - rng.uniform(18, 30)) / 8.0) ** 2) + 80 + 0.5 * tth
        scans[i] = rng.poisson(sig + bg)
    return scans, labels.astype(np.int32)


def savgol_coeffs(window, order):
    half = window // 2
    x = np.arange(-half, half + 1, dtype=float)
    A = np.vander(x, order + 1, increasing=True)
    return np.linalg.pinv(A)[0]


def preprocess(counts):
    y = counts.astype(np.float64)
    win = np.lib.stride_tricks.sliding_window_view(np.pad(y, 75, mode="edge"), 151)
    bg = win.min(axis=1)
    bg = np.convolve(np.pad(bg, 50, mode="edge"), np.ones(101) / 101, mode="valid")
    y = np.clip(y - bg, 0, None)
    y = np.convolve(np.pad(y, 10, mode="edge"), savgol_coeffs(21, 3)[::-1], mode="valid")
    thr = y.mean() + 3 * y.std()
    peaks = np.zeros_like(y)
    for i in range(1, NPTS - 1):
        if y[i] > thr and y[i] >= y[i - 1] and y[i] > y[i + 1]:
            peaks[i] = y[i]
    y = y / (y.max() + 1e-6)
    peaks = peaks / (peaks.max() + 1e-6)
    out = np.stack([y.reshape(OUT, -1).mean(1), peaks.reshape(OUT, -1).max(1)], -1)
    return out.astype(np.float32)


def make_dataset(scans, labels):
    ds = tf.data.Dataset.from_tensor_slices((scans, labels))
    ds = ds.shuffle(len(labels), seed=SEED).repeat()

    def prep(c, l):
        x = tf.numpy_function(preprocess, [c], tf.float32)
        x.set_shape((OUT, 2))
        return x, l
    return ds.map(prep).batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((OUT, 2))
    x = inp
    for f in (24, 32, 48, 64):
        x = keras.layers.Conv1D(f, 5, padding="same", activation="relu")(x)
        x = keras.layers.Conv1D(f, 5, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["accuracy"][-1]


def main():
    t0 = time.perf_counter()
    scans, labels = synth_scans(np.random.default_rng(SEED))
    sps, acc = train(make_dataset(scans, labels))
    emit({"steps_per_second": 1.0 / sps})
    msg = ""
    if "--truth" in sys.argv:
        batch = next(iter(make_dataset(scans, labels)))
        csps, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sps - csps) / sps, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
    print("xrd crystal system: acc %.3f full %.4fs/step%s wall %.1fs"
          % (acc, sps, msg, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
