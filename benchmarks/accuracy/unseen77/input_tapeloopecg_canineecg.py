"""Canine ECG rhythm classifier, custom GradientTape loop (u77).

Domain: a veterinary cardiology service records 8 s lead-II ECGs from dogs;
each record is a binary digitizer frame (struct header + int16 ADC counts).
Classes: sinus rhythm, atrial fibrillation, sinus bradycardia, VPCs.
Data path: binary records -> Python batch builder (struct unpack, ADC ->
mV, moving-average baseline removal, pure-Python R-peak detection, RR
features, decimation) -> numpy batch -> tf.function GradientTape step, loss
fetched with float() every step.
Deliberate bottleneck: the per-record Python signal processing between steps.
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
import struct

SCRIPT = "input_tapeloopecg_canineecg"
BATCH = 32
STEPS = 80
N_REC = 600
FS = 250
N = 8 * FS
OUT_LEN = 500
HDR = "<4sHHfH"


def make_records(rng):
    recs, labels = [], []
    t = np.arange(N) / FS
    for i in range(N_REC):
        cls = int(rng.integers(0, 4))
        hr = [110, 140, 55, 100][cls] / 60.0
        beats, tb = [], 0.2
        while tb < 8.0:
            beats.append(tb)
            rr = 1 / hr
            if cls == 1:
                rr *= rng.uniform(0.6, 1.4)
            tb += rr
        sig = 0.1 * np.sin(2 * np.pi * 0.3 * t)
        for k, b in enumerate(beats):
            w = 0.012 if not (cls == 3 and k % 4 == 3) else 0.035
            sig += 1.5 * np.exp(-((t - b) / w) ** 2)
        sig += rng.normal(0, 0.05, N)
        gain = 200.0
        raw = (sig * gain).astype(np.int16)
        recs.append(struct.pack(HDR, b"ECG2", i % 97, FS, gain, N) + raw.tobytes())
        labels.append(cls)
    return recs, np.array(labels, np.int32)


def process_record(rec):
    magic, dog, fs, gain, n = struct.unpack_from(HDR, rec)
    mv = np.frombuffer(rec, np.int16, offset=struct.calcsize(HDR)).astype(np.float32) / gain
    base = np.convolve(mv, np.ones(fs // 2) / (fs // 2), mode="same")
    x = mv - base
    d = np.diff(x).tolist()
    xs = x.tolist()
    peaks, last = [], -fs
    thr = 0.6 * max(xs)
    for k in range(1, len(d)):
        if d[k - 1] > 0 and d[k] <= 0 and xs[k] > thr and k - last > fs // 5:
            peaks.append(k)
            last = k
    rr = [(b - a) / fs for a, b in zip(peaks, peaks[1:])] or [1.0]
    mean_rr = sum(rr) / len(rr)
    sd_rr = (sum((r - mean_rr) ** 2 for r in rr) / len(rr)) ** 0.5
    widths = []
    for p in peaks:
        k = p
        while k > 0 and xs[k] > 0.5 * xs[p]:
            k -= 1
        widths.append(p - k)
    marker = np.zeros(n, np.float32)
    marker[peaks] = 1.0
    dec = x[: OUT_LEN * (n // OUT_LEN)].reshape(OUT_LEN, -1).mean(1)
    mk = marker.reshape(OUT_LEN, -1).max(1)
    feats = np.full(OUT_LEN, mean_rr, np.float32)
    feats2 = np.full(OUT_LEN, sd_rr * 10 + (sum(widths) / max(len(widths), 1)) / 10.0, np.float32)
    return np.stack([dec, mk, feats, feats2], 1)


def make_batch(recs, labels, rng):
    picks = rng.integers(0, len(recs), BATCH)
    return np.stack([process_record(recs[i]) for i in picks]), labels[picks]


def build_model():
    return keras.Sequential([
        keras.Input((OUT_LEN, 4)),
        keras.layers.Conv1D(16, 9, activation="relu", padding="same"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(32, 7, activation="relu", padding="same"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(32, 5, activation="relu", padding="same"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(4),
    ])


def train(next_batch):
    keras.utils.set_random_seed(77)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return _sec_per_step(gaps), loss


def main():
    args = _args()
    recs, labels = make_records(np.random.default_rng(7705))
    rng = np.random.default_rng(1)
    full, loss = train(lambda: make_batch(recs, labels, rng))
    _mark()
    compute = None
    if args.truth:
        fixed = make_batch(recs, labels, np.random.default_rng(2))
        compute, _ = train(lambda: fixed)
    _finish(SCRIPT, full, compute, "last loss %.3f" % loss)


if __name__ == "__main__":
    main()
