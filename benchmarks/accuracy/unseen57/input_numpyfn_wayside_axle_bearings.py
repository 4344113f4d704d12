"""Rail: detect hot/defective axle bearings from wayside acoustic detector records.

Each record is a packed binary blob (struct header + int16 microphone samples), as a
trackside acoustic bearing detector would log it. A tf.data pipeline maps a
tf.numpy_function over every record: struct.unpack of the header, np.frombuffer of the
payload, a Hann-windowed FFT and a Python loop over frequency bands. The per-record
Python decode dominates each step. Trained with model.fit.
"""
import time
_T0 = time.perf_counter()
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


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
import struct

N_RECORDS = 2048
N_SAMPLES = 4096
N_BANDS = 128
BATCH = 64
STEPS = 40
EPOCHS = 3
HEADER_FMT = "<IIHHfff"  # train id, axle index, car no, side, speed, temperature, gain
HEADER_LEN = struct.calcsize(HEADER_FMT)


def make_records():
    rng = np.random.default_rng(57)
    recs, labels = [], []
    t = np.arange(N_SAMPLES) / 8000.0
    for i in range(N_RECORDS):
        faulty = int(rng.random() < 0.3)
        speed = rng.uniform(40, 120)
        base = 700 * np.sin(2 * np.pi * speed * 0.9 * t)
        if faulty:
            base += 900 * np.sin(2 * np.pi * rng.uniform(900, 1400) * t) * (np.sin(2 * np.pi * 7 * t) > 0.6)
        sig = np.clip(base + rng.normal(0, 400, N_SAMPLES), -32767, 32767).astype("<i2")
        head = struct.pack(HEADER_FMT, int(rng.integers(1e6)), i % 24, i % 40, i % 2,
                           float(speed), float(rng.uniform(10, 60) + 25 * faulty), 1.0)
        recs.append(head + sig.tobytes())
        labels.append(faulty)
    return recs, np.array(labels, np.int32)


RECORDS, LABELS = make_records()
ORDERS = [0.43, 1.0, 2.0, 3.1, 4.7, 5.3, 6.2, 7.9, 9.4, 10.6, 12.4, 15.8, 18.9, 21.2]
WINDOW = np.hanning(N_SAMPLES).astype(np.float32)


def decode_record(blob):
    blob = bytes(blob)
    train_id, axle, car, side, speed, temp, gain = struct.unpack(HEADER_FMT, blob[:HEADER_LEN])
    sig = np.frombuffer(blob[HEADER_LEN:], dtype="<i2").astype(np.float32) / (32768.0 * gain)
    spec = np.abs(np.fft.rfft(sig * WINDOW))[:N_SAMPLES // 2]
    bands = spec.reshape(N_BANDS, -1)
    feats = np.empty((N_BANDS, 4), np.float32)
    feats[:, 0] = np.log1p(bands.mean(axis=1))
    feats[:, 1] = np.log1p(bands.max(axis=1))
    feats[:, 2] = bands.std(axis=1) / (bands.mean(axis=1) + 1e-6)
    # bearing defect orders (cage, ball, inner/outer race harmonics) relative to wheel speed
    rot_hz = speed / 3.6 / (np.pi * 0.92)
    bin_hz = 8000.0 / N_SAMPLES
    for k, order in enumerate(ORDERS):
        for harmonic in (1,):
            centre = int(harmonic * order * rot_hz / bin_hz) % (N_SAMPLES // 2 - 8)
            side = spec[centre:centre + 8]
            feats[3 * k + harmonic - 1, 3] = np.log1p(side.sum()) - np.log1p(np.median(side))
    return feats


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices((RECORDS, LABELS)).repeat()

    def _map(blob, label):
        feats = tf.numpy_function(decode_record, [blob], tf.float32)
        feats.set_shape((N_BANDS, 4))
        return feats, label

    return ds.map(_map).batch(BATCH)


def build_model():
    m = keras.Sequential([
        keras.Input((N_BANDS, 4)),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(48, 5, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2),
        keras.layers.Conv1D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = train(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"input_numpyfn_wayside_axle_bearings: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    finish_truth(full, compute)
