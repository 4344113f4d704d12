"""Fragrance review notes -> star rating (1-5).

Customer reviews of perfumes ("opens with bergamot and pink pepper, dries
down to sandalwood, longevity 6h ...") are pre-tokenised into id arrays held
in memory.  After every epoch a callback scores the whole shelf of held-out
reviews with model.predict and reports accuracy and mean absolute star error.
"""
import time; T0 = time.perf_counter()
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


class ShelfScore(keras.callbacks.Callback):
    """Scores every held-out review at the end of each epoch."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seconds, self.history = x, y, 0.0, []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        logits = self.model.predict(self.x, batch_size=2048, verbose=0)
        stars = logits.argmax(1)
        self.history.append((float((stars == self.y).mean()), float(np.abs(stars - self.y).mean())))
        self.seconds += time.perf_counter() - t


BATCH, STEPS, EPOCHS, SEQ, VOCAB = 128, 15, 4, 80, 12000
N_TRAIN, N_HOLDOUT = 4096, 60000


def make_reviews(n, seed):
    rng = np.random.default_rng(seed)
    stars = rng.integers(0, 5, n).astype(np.int32)
    base = rng.zipf(1.3, (n, SEQ)) % VOCAB
    cue = (stars[:, None] * 400 + rng.integers(1, 400, (n, SEQ)))  # rating-bearing note words
    use_cue = rng.random((n, SEQ)) < 0.15
    ids = np.where(use_cue, cue, base).astype(np.int32)
    lengths = rng.integers(20, SEQ + 1, n)
    ids[np.arange(SEQ)[None] >= lengths[:, None]] = 0
    return ids, stars


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((SEQ,), dtype="int32")
    h = layers.Embedding(VOCAB, 64)(inp)
    h = layers.Conv1D(128, 5, padding="same", activation="relu")(h)
    h = layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = layers.GlobalMaxPooling1D()(h)
    h = layers.Dense(64, activation="relu")(h)
    m = keras.Model(inp, layers.Dense(5)(h))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    shelf = ShelfScore(XH, YH)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, shelf], verbose=0)
    return timer.seconds_per_step(), shelf


XT, YT = make_reviews(N_TRAIN, 88)
XH, YH = make_reviews(N_HOLDOUT, 89)
ds = tf.data.Dataset.from_tensor_slices((XT, YT)).shuffle(N_TRAIN, seed=88).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full, shelf = train(ds)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print(f"[fragrancenotes] {1.0 / full:.2f} steps/s, holdout eval {shelf.seconds:.1f}s of wall {wall:.1f}s "
      f"= {100 * shelf.seconds / wall:.1f}% (last acc {shelf.history[-1][0]:.3f}, MAE {shelf.history[-1][1]:.2f})")

if TRUTH:
    batch = next(iter(ds))
    compute, shelf2 = train(tf.data.Dataset.from_tensors(batch).repeat())
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[fragrancenotes] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, "
          f"input fraction {F:.3f}, eval in truth run {shelf2.seconds:.1f}s")
