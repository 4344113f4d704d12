import time; T0 = time.perf_counter()
"""Tent rigging load-cell anomaly detector.

Every king pole and quarter pole of the big top has a load cell sampled at
200 Hz.  Raw windows are stored as int16 counts; a serial tf.data map calls a
NumPy/Python routine through tf.numpy_function that calibrates the counts,
runs a Python despiking pass and a wind-gust peak finder, and summarises the
window.  model.fit learns whether the rigging needs re-tensioning.
"""
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 32
EPOCHS = 4
STEPS_PER_EPOCH = 200
WINDOW = 400
N_WINDOWS = 2048
N_FEATURES = 80


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def make_raw(seed):
    rng = np.random.default_rng(seed)
    t = np.arange(WINDOW) / 200.0
    base = rng.uniform(800, 3000, size=(N_WINDOWS, 1))
    sway = rng.uniform(20, 200, size=(N_WINDOWS, 1)) * np.sin(2 * np.pi * rng.uniform(0.1, 1.5, size=(N_WINDOWS, 1)) * t)
    noise = rng.normal(0, 15, size=(N_WINDOWS, WINDOW))
    raw = base + sway + noise
    spikes = rng.random((N_WINDOWS, WINDOW)) < 0.01
    raw[spikes] += 1500
    gain = rng.uniform(0.9, 1.1, size=(N_WINDOWS,)).astype(np.float32)
    label = ((sway[:, :].max(axis=1) > 150) | (base[:, 0] > 2700)).astype(np.float32)
    return raw.astype(np.int16), gain, label


def condition_window(counts, gain):
    """Calibrate, despike and summarise one load-cell window (plain Python)."""
    kn = counts.astype(np.float64) * float(gain) * 0.0098
    vals = kn.tolist()
    clean = []
    prev = vals[0]
    for v in vals:                      # despike: reject jumps > 8 kN
        if abs(v - prev) > 8.0:
            v = prev
        clean.append(v)
        prev = v
    peaks = []
    for i in range(1, len(clean) - 1):  # gust peaks
        if clean[i] > clean[i - 1] and clean[i] >= clean[i + 1]:
            peaks.append(clean[i])
    arr = np.asarray(clean)
    feats = np.zeros(N_FEATURES, np.float32)
    feats[0] = arr.mean() / 30.0
    feats[1] = arr.std()
    feats[2] = len(peaks) / 100.0
    feats[3] = (max(peaks) if peaks else 0.0) / 30.0
    seg = arr[: 76 * 5].reshape(76, 5).mean(axis=1)
    feats[4:] = (seg - arr.mean()) / 2.0
    return feats


def np_feature(counts, gain):
    return condition_window(counts, gain)


def make_dataset(raw, gain, label):
    ds = tf.data.Dataset.from_tensor_slices((raw, gain, label)).repeat()

    def conditioned(counts, g, y):
        f = tf.numpy_function(np_feature, [counts, g], tf.float32)
        f.set_shape((N_FEATURES,))
        return f, y

    return ds.map(conditioned).batch(BATCH).prefetch(1)


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(N_FEATURES,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(ds):
    timer = StepTimer()
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
              callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    keras.utils.set_random_seed(3)
    raw, gain, label = make_raw(3)
    full = train(make_dataset(raw, gain, label))
    emit({"steps_per_second": 1.0 / full})
    print(f"[riggalo] numpy_function load cells: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")
    if TRUTH:
        batch = next(iter(make_dataset(raw, gain, label)))
        keras.utils.set_random_seed(3)
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"[riggalo] truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, "
              f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
