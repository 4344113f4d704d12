"""River discharge forecasting for a hydropower operator.

Upstream gauge, rainfall and snow-melt series are generated in memory as
sliding windows; model.fit trains a wide MLP forecaster while a callback
writes a full .keras model archive (weights plus optimizer state) after
every batch so a pre-empted spot job can resume, and the saves dominate the wall time.
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

WIN = 96
FEAT = 8
HORIZON = 24
BATCH = 64
STEPS = 60
EPOCHS = 2
SAVE_EVERY = 1


class StepTimer(keras.callbacks.Callback):
    """Timer head: stamps the end of each step."""
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


class TimerTail(keras.callbacks.Callback):
    """Timer tail: restarts the step clock after the save callback ran."""
    def __init__(self, timer):
        super().__init__()
        self.timer = timer

    def on_train_batch_end(self, batch, logs=None):
        self.timer._last = time.perf_counter()


class ArchiveEveryN(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.seconds = 0.0
        self.count = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save(os.path.join(self.folder, "discharge_last.keras"))
            self.count += 1
            self.seconds += time.perf_counter() - t


def make_windows(rng, n=6000):
    t = np.arange(n + WIN + HORIZON)
    rain = np.maximum(0, rng.gamma(0.3, 4.0, len(t)) - 1)
    melt = np.maximum(0, np.sin(2 * np.pi * t / 365 / 24 * 30)) * 2
    q = np.convolve(rain + melt, np.exp(-np.arange(48) / 12.0), mode="full")[: len(t)]
    series = np.stack([q, rain, melt] + [rng.normal(0, 1, len(t)) for _ in range(FEAT - 3)], 1)
    series = ((series - series.mean(0)) / series.std(0)).astype(np.float32)
    idx = np.arange(n)[:, None]
    x = series[idx + np.arange(WIN)]
    y = series[idx + WIN + np.arange(HORIZON), 0]
    return x, y


def build_model():
    keras.utils.set_random_seed(8)
    inp = keras.Input((WIN, FEAT))
    x = layers.Flatten()(inp)
    x = layers.Dense(2048, activation="relu")(x)
    x = layers.Dense(2048, activation="relu")(x)
    x = layers.Dense(1024, activation="relu")(x)
    m = keras.Model(inp, layers.Dense(HORIZON)(x))
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds, folder):
    model = build_model()
    timer = StepTimer()
    saver = ArchiveEveryN(folder)
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[timer, saver, TimerTail(timer)], verbose=0)
    return timer.sec_per_step(), saver, hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_checkpoint_kerasarchive_batchcb_riverdischarge_")
    try:
        x, y = make_windows(np.random.default_rng(43))
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=2).repeat().batch(BATCH)
        full, saver, loss = run(ds, tmp)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        wall = time.perf_counter() - T0
        msg = (f"river discharge: {1.0 / full:.2f} steps/s, loss {loss:.3f}, "
               f"{saver.count} archives {saver.seconds:.1f}s of {wall:.1f}s")
        if truth:
            batch = next(iter(ds))
            comp, _, _ = run(tf.data.Dataset.from_tensors(batch).repeat(), tmp)
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
