"""Soil organic carbon regression from lab vis-NIR spectra.

Spectra and SOC targets are generated in memory; model.fit trains a Conv1D
regressor whose Dropout layers stay active at inference (Monte-Carlo
dropout). At each epoch end a callback runs model.evaluate on the hold-out
set and repeats model.predict over it to get predictive means and
uncertainty bands, which dominates the wall time.
"""
import json
import os
import sys
import time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import keras
from keras import layers

BANDS = 512
N_TRAIN = 4096
N_HOLD = 6000
BATCH = 64
STEPS = 40
EPOCHS = 3
MC_PASSES = 12


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


class MCDropoutReport(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0
        self.report = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        mse = self.model.evaluate(self.x, self.y, batch_size=512, verbose=0)
        draws = np.stack([self.model.predict(self.x, batch_size=512, verbose=0)[:, 0]
                          for _ in range(MC_PASSES)])
        mean, sd = draws.mean(0), draws.std(0)
        cover = float(np.mean(np.abs(mean - self.y) < 1.96 * sd))
        self.report.append((epoch, float(mse), float(sd.mean()), cover))
        self.seconds += time.perf_counter() - t


def make_data(rng, n):
    wl = np.linspace(400, 2500, BANDS)
    soc = rng.gamma(2.0, 1.2, n).astype(np.float32)
    base = 0.3 + 0.2 * np.sin(wl / 300)[None] + rng.normal(0, 0.02, (n, 1))
    absorb = soc[:, None] * 0.03 * np.exp(-((wl - 1700) / 80) ** 2)[None] \
        + soc[:, None] * 0.02 * np.exp(-((wl - 2300) / 60) ** 2)[None]
    x = base - absorb + rng.normal(0, 0.005, (n, BANDS))
    return x[..., None].astype(np.float32), soc


def build_model():
    keras.utils.set_random_seed(31)
    inp = keras.Input((BANDS, 1))
    x = layers.Conv1D(32, 9, strides=2, padding="same", activation="relu")(inp)
    x = layers.Dropout(0.1)(x, training=True)
    x = layers.Conv1D(64, 9, strides=2, padding="same", activation="relu")(x)
    x = layers.Dropout(0.1)(x, training=True)
    x = layers.Conv1D(64, 9, strides=2, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.2)(layers.Dense(64, activation="relu")(x), training=True)
    m = keras.Model(inp, layers.Dense(1)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


def run(train_ds, xh, yh):
    model = build_model()
    timer = StepTimer()
    mc = MCDropoutReport(xh, yh)
    model.fit(train_ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, mc], verbose=0)
    return timer.sec_per_step(), mc


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_eval_mcdropout_callback_soilcarbon_")
    try:
        rng = np.random.default_rng(43)
        xt, yt = make_data(rng, N_TRAIN)
        xh, yh = make_data(rng, N_HOLD)
        ds = tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(N_TRAIN, seed=1).repeat().batch(BATCH)
        full, mc = run(ds, xh, yh)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        wall = time.perf_counter() - T0
        msg = (f"soil carbon MC-dropout: {1.0 / full:.2f} steps/s, hold-out mse {mc.report[-1][1]:.3f}, "
               f"coverage {mc.report[-1][3]:.2f}, eval {mc.seconds:.1f}s of {wall:.1f}s")
        if truth:
            batch = next(iter(ds))
            comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat(), xh, yh)
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
