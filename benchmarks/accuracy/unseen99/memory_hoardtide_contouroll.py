import time; T0 = time.perf_counter()
"""Contour-interpolation network whose callback hoards weight snapshots.

A dense network learns to interpolate spot heights between digitised contour
lines (inputs: distances and elevations of the nearest contours).  A
"training history" callback copies every weight array after each batch into a
list that is never cleared, so resident memory climbs through the run.
"""
import json
import os
import resource
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

NFEAT = 32
BATCH = 128
STEPS = 40
EPOCHS = 3


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


class WeightHistory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.snapshots = []
        self.rss = []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(round(rss_mib()))


def contour_samples(n, rs):
    x = rs.uniform(-1, 1, (n, NFEAT)).astype(np.float32)
    y = (np.sin(x[:, :8] * 3).sum(1, keepdims=True) + x[:, 8:16].mean(1, keepdims=True)).astype(np.float32)
    return x, y


rs = np.random.RandomState(14)
cx, cy = contour_samples(BATCH * STEPS, rs)


def build_model():
    keras.utils.set_random_seed(29)
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = WeightHistory()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, hist], verbose=0)
    return timer.seconds_per_step(), hist


def sample_dataset():
    ds = tf.data.Dataset.from_tensor_slices((cx, cy)).shuffle(4096, seed=5)
    return ds.repeat().batch(BATCH).prefetch(2)


full, hist = train(sample_dataset())
emit({"steps_per_second": 1.0 / full})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"contouroll: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, {len(hist.snapshots)} "
      f"snapshots, RSS by epoch {hist.rss} MiB, peak {peak / 1024:.2f} GiB, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    del hist
    one = next(iter(sample_dataset()))
    compute, hist2 = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"contouroll: truth compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}, "
          f"RSS by epoch {hist2.rss} MiB, wall {time.perf_counter() - T0:.1f} s")
