"""Returned-mail reason notes -> return-reason classifier.

Input path: hashed word-id sequences of the carrier's handwritten/typed return notes
("addressee gone away", "refused", "insufficient address" ...) held in memory and fed
to model.fit from NumPy. A callback runs model.predict over a large held-out archive
of notes at every epoch end (in both runs) and scores it.
Known bottleneck: the per-epoch evaluation sweep (eval-bound).
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

N_TRAIN = 8192
N_HELDOUT = 60000
BATCH = 128
STEPS = 40
EPOCHS = 3
SEQ = 48
VOCAB = 5000
N_REASONS = 9


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


class HeldOutSweep(keras.callbacks.Callback):
    """Scores the whole held-out note archive after every epoch."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0
        self.acc = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(self.x, batch_size=512, verbose=0)
        self.acc.append(float(np.mean(np.argmax(logits, axis=1) == self.y)))
        self.seconds += time.perf_counter() - t


REASON_WORDS = [
    ["gone", "away", "moved", "left", "forwarding"],
    ["refused", "declined", "not", "wanted"],
    ["insufficient", "address", "incomplete", "no", "house", "number"],
    ["addressee", "unknown", "not", "known", "here"],
    ["deceased", "estate", "late"],
    ["no", "such", "street", "road", "invalid"],
    ["not", "called", "for", "uncollected", "depot", "expired"],
    ["damaged", "torn", "wet", "parcel", "packaging"],
    ["customs", "duty", "unpaid", "declaration", "missing"],
]


def make_notes(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_REASONS, n).astype(np.int32)
    x = rng.integers(1, VOCAB, (n, SEQ)).astype(np.int32)          # filler / noise words
    for r, words in enumerate(REASON_WORDS):
        ids = np.array([hash_word(w) for w in words])
        rows = np.where(y == r)[0]
        pos = rng.integers(0, SEQ, (len(rows), 4))
        x[rows[:, None], pos] = ids[rng.integers(0, len(ids), (len(rows), 4))]
    return x, y


def hash_word(w):
    h = 5381
    for c in w:
        h = (h * 33 + ord(c)) & 0xFFFFFFFF
    return h % (VOCAB - 1) + 1


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((SEQ,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, 128)(inp)
    h = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(N_REASONS)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


XT, YT = make_notes(N_TRAIN, 96)
XH, YH = make_notes(N_HELDOUT, 97)


def run(data):
    model = build_model()
    timer = StepTimer()
    sweep = HeldOutSweep(XH, YH)
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, sweep], verbose=0)
    return timer.seconds_per_step(), sweep


full_ds = tf.data.Dataset.from_tensor_slices((XT, YT)).shuffle(N_TRAIN, seed=96).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full, sweep = run(full_ds)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print(f"returnnotes: {full*1000:.1f} ms/step, evaluation {sweep.seconds:.1f} s of {wall:.1f} s wall "
      f"= {100*sweep.seconds/wall:.1f}% (held-out acc {sweep.acc[-1]:.3f})")

if TRUTH:
    batch = next(iter(full_ds))
    compute, sweep2 = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    wall2 = time.perf_counter() - T0
    print(f"returnnotes truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}; "
          f"evaluation {sweep.seconds + sweep2.seconds:.1f} s of {wall2:.1f} s total = {100*(sweep.seconds+sweep2.seconds)/wall2:.1f}%")
