"""Weld-flaw detection from ultrasonic A-scans of pipeline girth welds.

Raw A-scan traces (echo trains plus noise) sit in memory; a serial
tf.data map calls tf.numpy_function to compute a Morlet continuous wavelet
transform scalogram per trace (one np.convolve per scale), and model.fit
trains a small Conv2D classifier on the scalograms.
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

N_TRACES = 1024
LEN = 2048
SCALES = np.geomspace(3, 60, 32)
BATCH = 32
STEPS = 45
EPOCHS = 3
DOWN = 16  # time decimation of the scalogram


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


def make_traces(rng):
    t = np.arange(LEN) / 50e6
    x = rng.normal(0, 0.05, (N_TRACES, LEN)).astype(np.float32)
    y = (rng.random(N_TRACES) < 0.4).astype(np.int32)
    for i in range(N_TRACES):
        for k, pos in enumerate((300, 1700)):  # front wall, back wall
            x[i] += (0.9 / (k + 1)) * np.exp(-((np.arange(LEN) - pos) / 25.0) ** 2) * np.cos(2 * np.pi * 5e6 * t)
        if y[i]:
            pos = rng.integers(500, 1500)
            x[i] += rng.uniform(0.1, 0.4) * np.exp(-((np.arange(LEN) - pos) / 15.0) ** 2) * np.cos(2 * np.pi * 7e6 * t)
    return x, y


def morlet_cwt(trace):
    rows = []
    for s in SCALES:
        n = np.arange(-int(4 * s), int(4 * s) + 1)
        w = np.exp(1j * 5.0 * n / s) * np.exp(-0.5 * (n / s) ** 2) / np.sqrt(s)
        c = np.abs(np.convolve(trace, w, mode="same"))
        rows.append(c[: LEN // DOWN * DOWN].reshape(-1, DOWN).max(axis=1))
    sc = np.log1p(np.stack(rows))
    return ((sc - sc.mean()) / (sc.std() + 1e-6)).astype(np.float32)[..., None]


def make_dataset(traces, labels):
    def cwt(trace, label):
        sc = tf.numpy_function(morlet_cwt, [trace], tf.float32)
        sc.set_shape((len(SCALES), LEN // DOWN, 1))
        return sc, label
    ds = tf.data.Dataset.from_tensor_slices((traces, labels)).repeat()
    return ds.map(cwt).batch(BATCH)


def build_model():
    keras.utils.set_random_seed(3)
    inp = keras.Input((len(SCALES), LEN // DOWN, 1))
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    m = keras.Model(inp, layers.Dense(1)(layers.Dense(64, activation="relu")(x)))
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_input_morlet_numpyfn_weldultrasound_")
    try:
        rng = np.random.default_rng(430)
        traces, labels = make_traces(rng)
        ds = make_dataset(traces, labels)
        full, loss = run(ds)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"weld A-scans: {1.0 / full:.2f} steps/s, loss {loss:.3f}"
        if truth:
            batch = next(iter(ds))
            comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat())
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
