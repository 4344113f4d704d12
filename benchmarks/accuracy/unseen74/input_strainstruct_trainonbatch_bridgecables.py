"""Stay-cable tension classifier for a cable-stayed bridge: train_on_batch fed from Python,
which unpacks struct-packed accelerometer records and computes spectral band energies per batch."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


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

import struct

SAMPLES = 256
BANDS = 32
BATCH = 32
STEPS = 150
EPOCHS = 3
N_REC = 600
REC = struct.Struct("<IHhf")  # timestamp_ms, sensor_id, temperature_cdeg, accel_g


def make_records(n, seed=29):
    rng = np.random.default_rng(seed)
    blobs, labels = [], []
    t = np.arange(SAMPLES) / 100.0
    for k in range(n):
        cls = int(rng.integers(0, 4))
        f0 = 1.2 + 0.5 * cls + rng.normal(0, 0.05)
        sig = sum(np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6)) / h for h in range(1, 5))
        sig = sig * 0.01 + rng.normal(0, 0.004, SAMPLES)
        buf = bytearray()
        for i in range(SAMPLES):
            buf += REC.pack(1000 * k + 10 * i, 40 + k % 8, int(rng.normal(1500, 300)), float(sig[i]))
        blobs.append(bytes(buf))
        labels.append(cls)
    return blobs, np.array(labels, np.int32)


def decode(blob, rng):
    acc = np.empty(SAMPLES, np.float64)
    temp = 0.0
    for i, (ts, sid, tc, a) in enumerate(REC.iter_unpack(blob)):
        acc[i] = a
        temp += tc
    acc = acc - acc.mean()
    acc *= np.hanning(SAMPLES) * rng.uniform(0.9, 1.1)
    spec = np.abs(np.fft.rfft(acc)) ** 2
    bands = np.log1p(1e4 * np.add.reduceat(spec[1:129], np.arange(0, 128, 128 // BANDS)))
    return np.concatenate([bands, [temp / SAMPLES / 3000.0]]).astype(np.float32)


def make_batch(blobs, labels, rng):
    ids = rng.integers(0, len(blobs), BATCH)
    return np.stack([decode(blobs[j], rng) for j in ids]), labels[ids]


def build_model():
    m = keras.Sequential([keras.Input((BANDS + 1,)),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(256, activation="relu"),
                          keras.layers.Dense(4)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(batches):
    tf.random.set_seed(0)
    model = build_model()
    gaps = []
    for _ in range(EPOCHS):
        last = None
        for _ in range(STEPS):
            x, y = batches()
            loss = float(model.train_on_batch(x, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), len(gaps), loss


def main():
    tmp = tempfile.mkdtemp(prefix="u74_input_strainstruct_trainonbatch_bridgecables_")
    try:
        blobs, labels = make_records(N_REC)
        rng = np.random.default_rng(31)
        full, n, loss = train(lambda: make_batch(blobs, labels, rng))
        emit({"steps_per_second": 1.0 / full})
        print(f"[input_strainstruct_trainonbatch_bridgecables] full {full*1000:.1f} ms/step ({1.0/full:.2f} steps/s) "
              f"over {n} gaps, loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            fixed = make_batch(blobs, labels, np.random.default_rng(99))
            comp, _, _ = train(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[input_strainstruct_trainonbatch_bridgecables] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
