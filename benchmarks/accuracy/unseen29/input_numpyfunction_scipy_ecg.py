"""Arrhythmia classification from single-lead ECG strips.

Raw 10-second strips (360 Hz) are held in memory; every example goes through a
``Dataset.map`` that calls ``tf.numpy_function`` into SciPy: a Butterworth
band-pass (``filtfilt``), a notch for mains hum, a median-filter baseline
removal and a Savitzky-Golay smoother, before batching.
"""
import argparse
import json
import os
import time

import numpy as np
import scipy.signal as sps
import tensorflow as tf
import keras

FS = 360
LEN = 3600
BATCH = 32
STEPS_PER_EPOCH = 60
EPOCHS = 3
N_STRIPS = 2000

_BP = sps.butter(4, [0.5, 40.0], btype="bandpass", fs=FS, output="sos")
_NOTCH_B, _NOTCH_A = sps.iirnotch(60.0, 30.0, fs=FS)


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


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_strips(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(LEN) / FS
    strips = np.empty((N_STRIPS, LEN), np.float32)
    labels = rng.integers(0, 5, N_STRIPS).astype(np.int32)
    for i in range(N_STRIPS):
        hr = 1.0 + 0.25 * labels[i] + rng.normal(0, 0.05)
        beat = np.exp(-((np.mod(t * hr, 1.0) - 0.3) ** 2) / 0.0008)
        wander = 0.4 * np.sin(2 * np.pi * 0.2 * t + rng.uniform(0, 6))
        hum = 0.1 * np.sin(2 * np.pi * 60 * t)
        strips[i] = beat + wander + hum + rng.normal(0, 0.05, LEN)
    return strips, labels


def clean_strip(x):
    y = sps.sosfiltfilt(_BP, x)
    y = sps.filtfilt(_NOTCH_B, _NOTCH_A, y)
    y = y - sps.medfilt(y, 71)
    y = sps.savgol_filter(y, 15, 3)
    y = (y - y.mean()) / (y.std() + 1e-6)
    return y.astype(np.float32)


def make_dataset(strips, labels):
    ds = tf.data.Dataset.from_tensor_slices((strips, labels)).shuffle(N_STRIPS, seed=0).repeat()

    def prep(x, y):
        x = tf.numpy_function(clean_strip, [x], tf.float32)
        x.set_shape((LEN,))
        return x[:, None], y

    return ds.map(prep).batch(BATCH).prefetch(2)


def build_model():
    inp = keras.Input((LEN, 1))
    x = inp
    for f in (16, 32, 32, 64):
        x = keras.layers.Conv1D(f, 7, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(3)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(5)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(ds):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    strips, labels = make_strips()
    ds = make_dataset(strips, labels)
    full = train(ds)
    report("steps_per_second", 1.0 / full)
    msg = f"ecg: {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
