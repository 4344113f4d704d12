"""Sorting-machine barcode scans -> sort-bin classifier.

Input path: a Python generator decodes each raw scanner trace (per-sample numpy +
Python checksum work) and is wrapped by tf.data.Dataset.from_generator, batched and
fed to model.fit. Known bottleneck: the Python generator (input-bound).
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 128
STEPS = 60
EPOCHS = 3
TRACE_LEN = 600
FEAT = 256
N_BINS = 48
SCAN_WORK = 2  # passes of the per-scan edge detector


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


DIGITS = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"


def make_barcode(rng):
    body = "".join(DIGITS[i] for i in rng.integers(0, len(DIGITS), 20))
    check = sum((i + 1) * DIGITS.index(c) for i, c in enumerate(body)) % 34
    return body + DIGITS[check]


def decode_scan(rng):
    """Simulate one conveyor scan and turn it into a fixed-length feature vector."""
    code = make_barcode(rng)
    bars = np.repeat(np.array([DIGITS.index(c) % 7 + 1 for c in code], dtype=np.float32), TRACE_LEN // len(code) + 1)[:TRACE_LEN]
    trace = bars + rng.normal(0.0, 0.6, TRACE_LEN).astype(np.float32)
    trace = np.convolve(trace, np.ones(5, dtype=np.float32) / 5, mode="same")
    for _ in range(SCAN_WORK):
        # edge detection and run-length re-estimation, per scan line
        edges = []
        prev = trace[0]
        for i in range(1, TRACE_LEN, 2):
            v = trace[i]
            if abs(v - prev) > 0.9:
                edges.append(i)
            prev = v
        runs = np.diff(np.array(edges + [TRACE_LEN], dtype=np.float32)) if edges else np.zeros(1, np.float32)
    ok = sum((i + 1) * DIGITS.index(c) for i, c in enumerate(code[:-1])) % 34 == DIGITS.index(code[-1])
    spec = np.abs(np.fft.rfft(trace))[: FEAT - 16].astype(np.float32)
    spec /= spec.max() + 1e-6
    hist = np.histogram(runs, bins=15, range=(0, 60))[0].astype(np.float32) / max(len(runs), 1)
    x = np.concatenate([spec, hist, np.array([float(ok)], np.float32)])
    y = (DIGITS.index(code[0]) * 7 + DIGITS.index(code[1])) % N_BINS
    return x, np.int32(y)


def scan_generator():
    rng = np.random.default_rng(96)
    while True:
        yield decode_scan(rng)


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        scan_generator,
        output_signature=(tf.TensorSpec((FEAT,), tf.float32), tf.TensorSpec((), tf.int32)),
    )
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(1536, activation="relu")(inp)
    h = keras.layers.Dense(1536, activation="relu")(h)
    h = keras.layers.Dense(768, activation="relu")(h)
    out = keras.layers.Dense(N_BINS)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = run(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"sortscans: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    batch = next(iter(make_dataset()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"sortscans truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
