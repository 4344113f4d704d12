"""Medieval manuscript line-image script classification (Carolingian, Gothic, ...)
with a custom callback that writes a full .keras archive every few batches.

Bottleneck (checkpoint): one callback both times the steps and saves. In
on_train_batch_end it takes the step stamp first, then (every SAVE_EVERY batches)
calls model.save() on a model whose wide dense head plus Adam slots make each
archive tens of MB, then restarts the clock so step gaps never contain a save.
"""
import time
WALL_T0 = time.perf_counter()
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

SCRIPT = os.path.splitext(os.path.basename(__file__))[0]
_ap = argparse.ArgumentParser()
_ap.add_argument("--truth", action="store_true",
                 help="after the normal run, rerun on one reused batch and report truth_input_fraction")
ARGS = _ap.parse_args()


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def mean_after_warmup(gaps, skip=5):
    g = gaps[skip:] if len(gaps) > skip else gaps
    return float(np.mean(g)) if g else float("nan")


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


def finish(full_sec, compute_sec=None, extra=""):
    emit({"steps_per_second": 1.0 / full_sec})
    line = f"[{SCRIPT}] sec/step={full_sec:.4f} steps/s={1.0 / full_sec:.2f}"
    if compute_sec is not None:
        f = truth_fraction(full_sec, compute_sec)
        emit({"truth_input_fraction": f})
        line += f" compute_sec/step={compute_sec:.4f} truth_input_fraction={f:.3f}"
    line += f" wall={time.perf_counter() - WALL_T0:.1f}s" + (" " + extra if extra else "")
    print(line, flush=True)


keras.utils.set_random_seed(71)


BATCH = 8
H, W = 32, 128
N_CLASSES = 8
N_IMAGES = 1024
STEPS = 22
EPOCHS = 2
SAVE_EVERY = 1
KEEP = 2
TOKENS = 16
LEXICON = 300000
LEX_DIM = 100


class TimedBatchSaver(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.gaps = []
        self.save_seconds = 0.0
        self.saves = 0
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        if (batch + 1) % SAVE_EVERY == 0:
            path = os.path.join(self.folder, f"manuscripts-{self.saves % KEEP}.keras")
            self.model.save(path)
            self.saves += 1
            self.save_seconds += time.perf_counter() - now
        self._last = time.perf_counter()

    def sec_per_step(self):
        return mean_after_warmup(self.gaps)


def make_lines():
    rng = np.random.default_rng(71)
    y = rng.integers(N_CLASSES, size=N_IMAGES).astype(np.int32)
    stroke = rng.random((N_CLASSES, H, 8)) > 0.6
    x = np.zeros((N_IMAGES, H, W, 1), np.float32)
    for i, c in enumerate(y):
        x[i, :, :, 0] = np.tile(stroke[c], (1, W // 8)) * rng.uniform(0.6, 1.0)
    # diplomatic transcription of each line as ids into a historical-spelling lexicon
    tokens = (rng.integers(0, LEXICON, size=(N_IMAGES, TOKENS)) // N_CLASSES * N_CLASSES + y[:, None]) % LEXICON
    return {"line": x + rng.normal(0, 0.2, x.shape).astype(np.float32), "tokens": tokens.astype(np.int32)}, y


def build_model():
    line = keras.Input((H, W, 1), name="line")
    tokens = keras.Input((TOKENS,), dtype="int32", name="tokens")
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(line)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Dense(64, activation="relu")(keras.layers.Flatten()(h))
    # frozen pretrained historical-spelling word vectors (large, saved in every archive)
    lex = keras.layers.Embedding(LEXICON, LEX_DIM, trainable=False, name="frozen_lexicon")(tokens)
    t = keras.layers.GlobalAveragePooling1D()(lex)
    out = keras.layers.Dense(N_CLASSES)(keras.layers.Concatenate()([h, t]))
    m = keras.Model([line, tokens], out)
    m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds, folder):
    model = build_model()
    saver = TimedBatchSaver(folder)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[saver], verbose=0)
    return saver.sec_per_step(), saver, model.count_params()


tmp = tempfile.mkdtemp(prefix=f"u71_{SCRIPT}_")
try:
    X, Y = make_lines()
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N_IMAGES, seed=71).batch(BATCH).repeat().prefetch(2)
    full, saver, params = run(ds, tmp)
    save_s, saves = saver.save_seconds, saver.saves
    size_mb = os.path.getsize(os.path.join(tmp, "manuscripts-0.keras")) / 2 ** 20
    compute = None
    if ARGS.truth:
        compute, saver2, _ = run(tf.data.Dataset.from_tensors(next(iter(ds))).repeat(), tmp)
        save_s += saver2.save_seconds
        saves += saver2.saves
    wall = time.perf_counter() - WALL_T0
    finish(full, compute, extra=f"params={params} saves={saves} archive_mb={size_mb:.1f} "
                                f"save_s={save_s:.1f} save_share_of_wall={save_s / wall:.2f}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
