"""Fitness trackers: activity classifier; tf.data map calls tf.numpy_function to decode wrist-sensor packets.

Bottleneck (input): raw BLE notification payloads (bytes) are decoded with struct in Python,
checksums verified, heart-rate RR artefacts rejected with a Python loop and the accelerometer
stream resampled; all inside tf.numpy_function on each batch, single-threaded.
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

import struct

SEED = 6504
N_SESSIONS = 512
PACKETS = 128      # packets per window; each packet: seq, hr, rr, ax, ay, az, checksum
WIN = 64
BATCH = 32
STEPS = 60
EPOCHS = 3
PKT = struct.Struct("<HBHhhhB")


def make_payloads(rng):
    blobs, labels = [], []
    for i in range(N_SESSIONS):
        act = int(rng.integers(0, 6))
        hr = np.clip(70 + 18 * act + rng.normal(0, 5, PACKETS), 40, 220).astype(int)
        rr = (60000 / hr + rng.normal(0, 20, PACKETS)).astype(int)
        rr[rng.random(PACKETS) < 0.05] = 4000  # dropped beats / motion artefacts
        acc = rng.normal(0, 300 + 150 * act, (PACKETS, 3)).astype(int)
        buf = bytearray()
        for p in range(PACKETS):
            body = PKT.pack(p, int(hr[p]), int(rr[p]), int(acc[p, 0]), int(acc[p, 1]), int(acc[p, 2]), 0)
            buf += body[:-1] + bytes([sum(body[:-1]) & 0xFF])
        blobs.append(bytes(buf))
        labels.append(act)
    return blobs, np.array(labels, np.int32)


def decode_batch(blobs):
    out = np.zeros((len(blobs), WIN, 6), np.float32)
    for b, blob in enumerate(blobs):
        rows = []
        last_rr = None
        for off in range(0, len(blob), PKT.size):
            raw = blob[off:off + PKT.size]
            if (sum(raw[:-1]) & 0xFF) != raw[-1]:
                continue
            seq, hr, rr, ax, ay, az, _ = PKT.unpack(raw)
            if last_rr is not None and abs(rr - last_rr) > 0.2 * last_rr:
                rr = last_rr  # artefact rejection
            last_rr = rr
            mag = (ax * ax + ay * ay + az * az) ** 0.5
            rows.append((hr / 200.0, rr / 1000.0, ax / 1000.0, ay / 1000.0, az / 1000.0, mag / 1000.0))
        # linear resample to WIN points in Python
        n = len(rows)
        for k in range(WIN):
            pos = k * (n - 1) / (WIN - 1)
            i0 = int(pos)
            i1 = min(i0 + 1, n - 1)
            w = pos - i0
            out[b, k] = [(1 - w) * a + w * c for a, c in zip(rows[i0], rows[i1])]
    return out


def build_model():
    inp = keras.Input((WIN, 6))
    x = keras.layers.Conv1D(64, 7, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(6)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    blobs, labels = make_payloads(np.random.default_rng(SEED))

    def dec(raw, y):
        x = tf.numpy_function(decode_batch, [raw], tf.float32)
        x.set_shape((None, WIN, 6))
        return x, y

    ds = (tf.data.Dataset.from_tensor_slices((blobs, labels)).shuffle(N_SESSIONS, seed=SEED)
          .repeat().batch(BATCH).map(dec))

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[fitnesstrackers] numpy_function decode fit: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb = decode_batch(np.array(blobs[:BATCH], dtype=object))
        one = tf.data.Dataset.from_tensors((xb, labels[:BATCH])).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[fitnesstrackers] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
