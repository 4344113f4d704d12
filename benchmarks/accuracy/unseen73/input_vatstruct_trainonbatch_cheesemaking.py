"""Cheese plant: predicts the optimal curd cutting window from vat telemetry.
Input path: train_on_batch fed from Python; each step unpacks little-endian
binary vat records with struct (header + 80 readings of temperature, pH and
curd firmness), derives the firmness slope and clotting time in Python and
builds the batch.  Deliberate bottleneck: input."""
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


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


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


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()
import struct

BATCH = 64
STEPS = 250
READS = 80
POOL = 500
HEAD = struct.Struct("<IHHdf")
READ = struct.Struct("<fffH")


def make_records(seed=55):
    rng = np.random.default_rng(seed)
    blobs, labels = [], []
    for i in range(POOL):
        rate = rng.uniform(0.5, 1.5)
        t = np.arange(READS) * 30.0
        firm = np.maximum(0, rate * (t - 600) / 60.0) + rng.normal(0, 0.2, READS)
        temp = 32 + rng.normal(0, 0.15, READS)
        ph = 6.6 - 0.002 * t / 30 + rng.normal(0, 0.01, READS)
        buf = bytearray(HEAD.pack(i, i % 8, READS, 1.7e9 + i * 3600.0, float(rate)))
        for k in range(READS):
            buf += READ.pack(float(temp[k]), float(ph[k]), float(firm[k]), k)
        blobs.append(bytes(buf))
        labels.append(float(600 + 35 * 60 / rate / 60.0))
    return blobs, (np.array(labels, np.float32) - 630.0) / 20.0


def parse(blob):
    vat_id, line, n, t0, _ = HEAD.unpack_from(blob, 0)
    off = HEAD.size
    temp, ph, firm = [], [], []
    for _ in range(n):
        a, b, c, k = READ.unpack_from(blob, off)
        off += READ.size
        temp.append(a); ph.append(b); firm.append(c)
    # derived: smoothed firmness slope and clotting onset in Python
    # 7-tap smoothing of the firmness channel, then its slope, all in Python
    sm = []
    for k in range(n):
        lo, hi = max(0, k - 3), min(n, k + 4)
        sm.append(sum(firm[lo:hi]) / (hi - lo))
    firm = sm
    slope = [0.0] + [(firm[k + 1] - firm[k - 1]) / 2.0 if 0 < k < n - 1 else 0.0 for k in range(1, n)]
    onset = next((k for k, f in enumerate(firm) if f > 0.5), n) / n
    feats = []
    for k in range(n):
        feats.append((temp[k] - 32.0) * 5.0)
        feats.append((ph[k] - 6.5) * 10.0)
        feats.append(firm[k] / 20.0)
        feats.append(slope[k])
    feats.append(onset); feats.append(line / 8.0)
    return feats


def python_batches(blobs, labels, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.integers(0, len(blobs), BATCH)
        x = np.asarray([parse(blobs[int(i)]) for i in idx], np.float32)
        yield x, labels[idx][:, None]


def build_model():
    m = keras.Sequential([keras.Input((READS * 4 + 2,)),
                          keras.layers.Dense(320, activation="relu"),
                          keras.layers.Dense(320, activation="relu"),
                          keras.layers.Dense(160, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(batches):
    keras.utils.set_random_seed(6)
    model = build_model()
    gaps, last = [], None
    for _ in range(STEPS):
        x, y = next(batches)
        loss = float(model.train_on_batch(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    args = parse_args()
    blobs, labels = make_records()
    full, loss = train(python_batches(blobs, labels, seed=1))
    emit({"steps_per_second": 1.0 / full})
    print(f"[cheesemaking] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, loss {loss:.3f}, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        xb, yb = next(python_batches(blobs, labels, seed=2))

        def same():
            while True:
                yield xb, yb
        compute, _ = train(same())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[cheesemaking] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
