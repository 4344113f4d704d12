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


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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
        return sum(g) / len(g)

# Passing-ship sighting tickets: the keeper fills one ticket per vessel sighted
# (time, bearing, estimated range, vessel rig/type, flag, signal hoisted, remarks).
# A Python loop parses a batch of ticket strings, encodes them (hashed remarks,
# one-hot fields, cyclic bearing/time), and calls model.train_on_batch.
# Label: whether the vessel later reported distress/needed assistance (0/1) -- here
# a synthetic rule over the fields.

import zlib

BATCH = 128
STEPS = 750
HASH_DIM = 1024
TYPES = ["steamer", "schooner", "brig", "trawler", "collier", "tug", "liner", "ketch", "lugger", "barque"]
FLAGS = ["GB", "NO", "NL", "FR", "DE", "DK", "SE", "ES", "PT", "IE", "US", "BE"]
SIGNALS = ["none", "NC", "V", "W", "AE", "CB", "K", "U"]
REMARKS = ["heavy", "laden", "low", "in", "water", "sails", "torn", "smoke", "from", "funnel", "standing", "off",
           "close", "reef", "signal", "lamp", "answered", "making", "way", "slowly", "towing", "boats", "lowered"]
N_FEAT = HASH_DIM + len(TYPES) + len(FLAGS) + len(SIGNALS) + 8


def make_ticket(rng):
    return (f"{int(rng.integers(0, 24)):02d}{int(rng.integers(0, 60)):02d}|brg {rng.uniform(0, 360):.1f}|"
            f"rng {rng.uniform(0.2, 15):.1f}nm|{TYPES[int(rng.integers(len(TYPES)))]}|"
            f"{FLAGS[int(rng.integers(len(FLAGS)))]}|{SIGNALS[int(rng.integers(len(SIGNALS)))]}|"
            + " ".join(REMARKS[int(i)] for i in rng.integers(0, len(REMARKS), size=int(rng.integers(20, 50)))))


def encode_ticket(ticket):
    hhmm, brg, rng_nm, vtype, flag, signal, remarks = ticket.split("|")
    v = np.zeros(N_FEAT, np.float32)
    words = remarks.split()
    for i, w in enumerate(words):
        v[zlib.crc32(w.encode()) % HASH_DIM] += 1.0
        if i:
            v[zlib.crc32((words[i - 1] + " " + w).encode()) % HASH_DIM] += 0.5
        for n in (3, 4):
            for j in range(len(w) - n + 1):
                v[zlib.crc32(w[j:j + n].encode()) % HASH_DIM] += 0.05
    o = HASH_DIM
    v[o + TYPES.index(vtype)] = 1.0
    o += len(TYPES)
    v[o + FLAGS.index(flag)] = 1.0
    o += len(FLAGS)
    v[o + SIGNALS.index(signal)] = 1.0
    o += len(SIGNALS)
    minutes = int(hhmm[:2]) * 60 + int(hhmm[2:])
    b = np.deg2rad(float(brg.split()[1]))
    r = float(rng_nm.split()[1][:-2])
    v[o:o + 8] = [np.sin(b), np.cos(b), np.sin(2 * np.pi * minutes / 1440), np.cos(2 * np.pi * minutes / 1440),
                  r / 15.0, np.log1p(r), len(words) / 50.0, float(signal in ("NC", "V", "W"))]
    label = float(signal in ("NC", "V", "W") or ("water" in words and "low" in words) or "lowered" in words)
    return v, label


def next_batch(rng):
    xs = np.empty((BATCH, N_FEAT), np.float32)
    ys = np.empty((BATCH, 1), np.float32)
    for i in range(BATCH):
        xs[i], ys[i, 0] = encode_ticket(make_ticket(rng))
    return xs, ys


def build_model():
    keras.utils.set_random_seed(6)
    m = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return m


def run_loop(batch_source):
    model = build_model()
    stamps = []
    for step in range(STEPS):
        x, y = batch_source(step)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


rng = np.random.default_rng(97)
full, last_loss = run_loop(lambda step: next_batch(rng))
emit({"steps_per_second": 1.0 / full})
print(f"[shipticket] normal run: {full*1000:.2f} ms/step, {1.0/full:.2f} steps/s, loss {last_loss:.4f}, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    xb, yb = next_batch(np.random.default_rng(97))
    compute, _ = run_loop(lambda step: (xb, yb))
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[shipticket] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f} s")
