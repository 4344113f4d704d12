"""Equine lameness grading from body-worn accelerometers (u77).

Domain: an equine veterinary hospital records trotting horses with a
poll/pelvis IMU; each packet is base64 text (struct header + int16 triaxial
samples). The model predicts the AAEP lameness grade 0-3.
Data path: base64 packet strings -> tf.data from_tensor_slices -> map(
tf.py_function(decode)) per packet (base64 decode, struct header, int16 ->
g units, detrend, pure-Python stride/peak detection, stride-normalised
resampling) -> batch -> model.fit.
Deliberate bottleneck: Python decode + stride segmentation in tf.py_function.
"""
import time

_WALL0 = time.perf_counter()

import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
import base64
import struct

SCRIPT = "input_pyfnaccel_equinegait"
BATCH = 64
STEPS = 25
EPOCHS = 2
N_PACKETS = 800
RAW = 800
WIN = 256
HDR = "<4sHHfI"


def make_packets(rng):
    pkts, labels = [], []
    t = np.arange(RAW) / 100.0
    for i in range(N_PACKETS):
        grade = int(rng.integers(0, 4))
        f = rng.uniform(1.3, 1.7)
        asym = 0.15 * grade
        vert = np.sin(2 * np.pi * 2 * f * t) + asym * np.sin(2 * np.pi * f * t + 0.3)
        sig = np.stack([vert, 0.4 * np.sin(2 * np.pi * f * t + 1.0), 0.2 * np.cos(2 * np.pi * 2 * f * t)], 1)
        sig += rng.normal(0, 0.08, sig.shape) + np.linspace(0, rng.normal(0, 0.3), RAW)[:, None]
        gain = 4096.0
        raw = np.clip(sig * gain, -32767, 32767).astype(np.int16)
        head = struct.pack(HDR, b"IMU1", i % 211, 100, gain, RAW)
        pkts.append(base64.b64encode(head + raw.tobytes()).decode("ascii"))
        labels.append(grade)
    return pkts, np.array(labels, np.int32)


def decode_packet(b64):
    blob = base64.b64decode(b64.numpy())
    magic, horse, rate, gain, n = struct.unpack_from(HDR, blob)
    raw = np.frombuffer(blob, np.int16, offset=struct.calcsize(HDR)).reshape(n, 3)
    sig = raw.astype(np.float64) / gain
    x = np.arange(n)
    for c in range(3):
        p = np.polyfit(x, sig[:, c], 1)
        sig[:, c] -= p[0] * x + p[1]
    v = sig[:, 0].tolist()
    peaks = []
    last = -100
    for k in range(2, n - 2):
        if v[k] > 0.5 and v[k] >= v[k - 1] and v[k] >= v[k + 1] and v[k] >= v[k - 2] and v[k] >= v[k + 2] and k - last > 15:
            peaks.append(k)
            last = k
    start = peaks[0] if peaks else 0
    stop = peaks[-1] if len(peaks) > 1 else n - 1
    grid = np.linspace(start, stop, WIN)
    out = np.stack([np.interp(grid, x, sig[:, c]) for c in range(3)], 1)
    amps = [v[k] for k in peaks] or [0.0]
    odd, even = amps[0::2], amps[1::2] or [0.0]
    sym = (sum(odd) / len(odd)) - (sum(even) / len(even))
    out = np.concatenate([out, np.full((WIN, 1), sym)], 1)
    return out.astype(np.float32)


def make_dataset(pkts, labels, seed):
    ds = tf.data.Dataset.from_tensor_slices((pkts, labels)).shuffle(len(pkts), seed=seed).repeat()

    def _map(b64, y):
        x = tf.py_function(decode_packet, [b64], tf.float32)
        x.set_shape((WIN, 4))
        return x, y

    return ds.map(_map).batch(BATCH)


def build_model():
    m = keras.Sequential([
        keras.Input((WIN, 4)),
        keras.layers.Conv1D(32, 7, activation="relu", padding="same"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(64, 5, activation="relu", padding="same"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(64, 5, activation="relu", padding="same"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(4),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return _sec_per_step(timer.gaps)


def main():
    args = _args()
    pkts, labels = make_packets(np.random.default_rng(7704))
    full = train(make_dataset(pkts, labels, 1))
    _mark()
    compute = None
    if args.truth:
        batch = next(iter(make_dataset(pkts, labels, 2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    _finish(SCRIPT, full, compute)


if __name__ == "__main__":
    main()
