"""Sea-turtle nest outcome model with aggressive checkpointing (u77).

Domain: a sea-turtle conservation programme monitors nesting beaches; each
nest has 96 covariates (sand temperature series summary, tide exposure,
predator signs, clutch size, relocation flag...) and the label is the
hatch-success band (5 classes).
Data path: in-memory arrays -> tf.data -> model.fit. A BeachCheckpointer
callback both times steps and saves: in on_train_batch_end it takes the
time stamp first, then every SAVE_EVERY batches writes a
tf.train.CheckpointManager checkpoint (model incl. a frozen 560k x 96
beach-segment embedding + optimizer), then restarts the
clock, so step gaps never contain a save.
Deliberate bottleneck: the frequent checkpoint writes of a wide model.
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
SCRIPT = "checkpoint_ckptmanager_turtlenesting"
BATCH = 64
STEPS = 25
EPOCHS = 2
SAVE_EVERY = 1
F = 96
N = 8000
N_SITES = 560000
EMB = 96


class BeachCheckpointer(keras.callbacks.Callback):
    def __init__(self, directory):
        super().__init__()
        self.directory = directory
        self.gaps = []
        self._last = None
        self.save_seconds = 0.0
        self.saves = 0
        self.manager = None

    def on_train_begin(self, logs=None):
        ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.manager = tf.train.CheckpointManager(ckpt, self.directory, max_to_keep=3)

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now
        if (batch + 1) % SAVE_EVERY == 0:
            t0 = time.perf_counter()
            self.manager.save()
            t1 = time.perf_counter()
            self.save_seconds += t1 - t0
            self.saves += 1
            self._last = t1


def build_model():
    # Frozen, pretrained beach-segment embedding (560k 50 m segments x 96):
    # cheap to look up, but every checkpoint writes the whole table.
    site = keras.Input((), dtype="int32", name="site")
    cov = keras.Input((F,), name="covariates")
    e = keras.layers.Embedding(N_SITES, EMB, trainable=False, name="segment_embedding")(site)
    h = keras.layers.Concatenate()([e, cov])
    h = keras.layers.Dense(512, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    m = keras.Model([site, cov], keras.layers.Dense(5)(h))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds, directory):
    keras.utils.set_random_seed(77)
    model = build_model()
    cb = BeachCheckpointer(directory)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return _sec_per_step(cb.gaps), cb


def main():
    args = _args()
    rng = np.random.default_rng(7711)
    x = rng.normal(0, 1, (N, F)).astype(np.float32)
    sites = rng.integers(0, N_SITES, N).astype(np.int32)
    y = (np.abs(x[:, :5]).argmax(1)).astype(np.int32)
    tmp = tempfile.mkdtemp(prefix="u77_checkpoint_ckptmanager_turtlenesting_")
    try:
        def ds(seed):
            return tf.data.Dataset.from_tensor_slices(((sites, x), y)).shuffle(N, seed=seed).repeat().batch(BATCH)

        full, cb = train(ds(1), os.path.join(tmp, "run"))
        _mark()
        save_s, saves = cb.save_seconds, cb.saves
        compute = None
        if args.truth:
            batch = next(iter(ds(2)))
            compute, cb2 = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "truth"))
            save_s += cb2.save_seconds
            saves += cb2.saves
        wall = time.perf_counter() - _WALL0
        _finish(SCRIPT, full, compute, "normal run: %d saves %.1f s = %.0f%% of wall at its end | all runs: %d saves %.1f s = %.0f%% of wall" % (
            cb.saves, cb.save_seconds, 100 * cb.save_seconds / _NORMAL_WALL[0], saves, save_s, 100 * save_s / wall))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
