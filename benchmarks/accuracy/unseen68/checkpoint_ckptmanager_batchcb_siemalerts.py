"""SIEM alert triage (escalate / suppress) over hashed alert-signature features.

Checkpoint-bound: a batch-end callback writes a tf.train.CheckpointManager
checkpoint (model + Adam slots, max_to_keep=3) after every batch. The model
carries a frozen 400k x 128 threat-intel signature embedding table, so each
save writes ~0.2 GB while the trainable head is small.
"""
import time
WALL0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import keras

PARSER = argparse.ArgumentParser()
PARSER.add_argument("--truth", action="store_true",
                    help="also train on one cached batch and report the input fraction")
ARGS = PARSER.parse_args()
keras.utils.set_random_seed(68)


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

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


def finish(name, full, compute=None, extra=""):
    emit({"steps_per_second": 1.0 / full})
    msg = f"[{name}] sec/step={full:.4f} steps/s={1.0 / full:.2f}"
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute_sec/step={compute:.4f} truth_input_fraction={frac:.3f}"
    msg += extra + f" wall={time.perf_counter() - WALL0:.1f}s"
    print(msg, flush=True)
NAME = "checkpoint_ckptmanager_batchcb_siemalerts"
BATCH = 256
STEPS = 30
EPOCHS = 2
SAVE_EVERY = 1
BUCKETS = 400000     # hashed (rule, src, dst) signature buckets
EMB = 128
SLOTS = 8


class ManagerCheckpoint(keras.callbacks.Callback):
    """Stamp first, then save, then restart the clock after the save."""

    def __init__(self, timer, directory):
        super().__init__()
        self.timer = timer
        self.directory = directory
        self.seconds = 0.0
        self.saves = 0
        self.manager = None
        self.count = 0

    def on_train_begin(self, logs=None):
        ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.manager = tf.train.CheckpointManager(ckpt, self.directory, max_to_keep=3)

    def on_epoch_begin(self, epoch, logs=None):
        self.timer.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.timer.last is not None:
            self.timer.gaps.append(now - self.timer.last)
        self.count += 1
        if self.count % SAVE_EVERY == 0:
            self.manager.save(checkpoint_number=self.count)
            self.saves += 1
        after = time.perf_counter()
        self.seconds += after - now
        self.timer.last = after


class GapStore:
    def __init__(self):
        self.gaps = []
        self.last = None


def make_data():
    rng = np.random.default_rng(68)
    n = 20000
    sig = rng.zipf(1.3, (n, SLOTS)) % BUCKETS
    sev = rng.random((n, 4)).astype(np.float32)
    y = ((sig[:, 0] % 7 == 0) | (sev[:, 0] > 0.9)).astype(np.float32)
    return sig.astype(np.int32), sev, y.reshape(-1, 1)


def build_model():
    s_in = keras.Input((SLOTS,), dtype="int32")
    v_in = keras.Input((4,))
    # frozen signature embeddings imported from the threat-intel model; still part of every checkpoint
    e = keras.layers.Embedding(BUCKETS, EMB, trainable=False, name="threatintel_signatures")(s_in)
    x = keras.layers.Concatenate()([keras.layers.Flatten()(e), v_in])
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model([s_in, v_in], out)
    m.compile(optimizer="adam", loss="binary_crossentropy", jit_compile=False)
    return m


def train(ds, root, tag):
    model = build_model()
    store = GapStore()
    cb = ManagerCheckpoint(store, os.path.join(root, tag))
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return sec_per_step(store.gaps), cb


def main():
    t_import = time.perf_counter() - WALL0
    root = tempfile.mkdtemp(prefix="u68_checkpoint_ckptmanager_batchcb_siemalerts_")
    try:
        sig, sev, y = make_data()
        ds = tf.data.Dataset.from_tensor_slices(((sig, sev), y)).repeat().batch(BATCH).prefetch(2)
        t_fit = time.perf_counter()
        full, cb = train(ds, root, "full")
        t_fit = time.perf_counter() - t_fit
        save_s, saves = cb.seconds, cb.saves
        compute = None
        if ARGS.truth:
            one = tf.data.Dataset.from_tensors(((sig[:BATCH], sev[:BATCH]), y[:BATCH])).repeat()
            compute, cb2 = train(one, root, "truth")
            save_s += cb2.seconds
            saves += cb2.saves
        wall = time.perf_counter() - WALL0
        finish(NAME, full, compute,
               extra=f" import_s={t_import:.1f} first_fit_s={t_fit:.1f} saves={saves} save_seconds={save_s:.1f} save_share_of_wall={save_s / wall:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
