"""Sleep-stage scoring from overnight polysomnography EEG.

Raw 30-second epochs (8 EEG/EOG channels, 100 Hz, int16 ADC counts) sit in a
memory-mapped .npy recording. A tf.data pipeline maps each epoch through
tf.numpy_function, which de-means and scales the counts, runs a 5-level Haar
wavelet decomposition per channel and resamples every sub-band envelope to a
common length, before a 1-D CNN classifies the five sleep stages.
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

SEED = 42
N_EPOCHS_REC = 1500
CH = 8
LEN = 3000
LEVELS = 5
OUT_LEN = 96
FEAT = CH * (LEVELS + 1)
BATCH = 32
STEPS = 300
EPOCHS = 2
STAGES = 5
UV_PER_COUNT = 0.195


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def write_recording(path, rng):
    t = np.arange(LEN) / 100.0
    stages = rng.integers(0, STAGES, N_EPOCHS_REC)
    rec = np.lib.format.open_memmap(path, mode="w+", dtype=np.int16,
                                    shape=(N_EPOCHS_REC, CH, LEN))
    dominant = [10.0, 6.0, 2.0, 1.0, 20.0]  # alpha, theta, delta, slow, beta-ish
    for i, s in enumerate(stages):
        f = dominant[s] * (1 + 0.1 * rng.standard_normal(CH))[:, None]
        sig = 40 * np.sin(2 * np.pi * f * t + rng.uniform(0, 6, (CH, 1)))
        sig += 15 * rng.standard_normal((CH, LEN))
        rec[i] = (sig / UV_PER_COUNT).astype(np.int16)
    rec.flush()
    return stages.astype(np.int32)


def haar_bands(counts):
    x = counts.astype(np.float64) * UV_PER_COUNT
    x -= x.mean(axis=1, keepdims=True)
    x /= x.std(axis=1, keepdims=True) + 1e-6
    out = np.empty((OUT_LEN, FEAT), dtype=np.float32)
    grid = np.linspace(0.0, 1.0, OUT_LEN)
    approx = x
    col = 0
    for level in range(LEVELS):
        n = approx.shape[1] // 2 * 2
        even, odd = approx[:, 0:n:2], approx[:, 1:n:2]
        detail = (even - odd) / np.sqrt(2.0)
        approx = (even + odd) / np.sqrt(2.0)
        src = np.linspace(0.0, 1.0, detail.shape[1])
        for c in range(CH):
            env = np.abs(detail[c])
            # short moving average -> band envelope, then resample
            k = max(1, detail.shape[1] // OUT_LEN)
            env = np.convolve(env, np.ones(k) / k, mode="same")
            out[:, col] = np.interp(grid, src, env)
            col += 1
    src = np.linspace(0.0, 1.0, approx.shape[1])
    for c in range(CH):
        out[:, col] = np.interp(grid, src, approx[c])
        col += 1
    return out


def make_dataset(rec_path, stages):
    rec = np.load(rec_path, mmap_mode="r")

    def load(i):
        return haar_bands(np.asarray(rec[int(i)]))

    def tf_load(i, y):
        x = tf.numpy_function(load, [i], tf.float32)
        x.set_shape((OUT_LEN, FEAT))
        return x, y

    idx = np.arange(len(stages))
    ds = tf.data.Dataset.from_tensor_slices((idx, stages))
    ds = ds.shuffle(len(stages), seed=SEED).repeat()
    return ds.map(tf_load).batch(BATCH)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((OUT_LEN, FEAT))
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(STAGES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u42_input_haar_numpyfn_eeg_")
    try:
        path = os.path.join(tmp, "night01_epochs.npy")
        stages = write_recording(path, rng)
        full, loss = train(make_dataset(path, stages))
        emit({"steps_per_second": 1.0 / full})
        msg = "eeg: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
        if truth:
            batch = next(iter(make_dataset(path, stages)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
