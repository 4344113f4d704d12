"""Promoter-region classifier on one-hot DNA (+ quality, coverage) read from lzma-compressed .npy shards.

An upstream job wrote each mini-batch as an xz-compressed .npy file
(batch_00017.npy.xz, with labels in a sidecar).  A Python generator
decompresses one file per step with lzma and np.load and yields it to fit.
"""
import argparse
import io
import json
import lzma
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

SEQ = 1000
BATCH = 128
N_FILES = 24
STEPS = 60
EPOCHS = 3
MOTIF = np.array([0, 3, 3, 0, 0, 0])  # TATAAA-ish, in ACGT indices


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.gaps = []

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def write_shards(root, rng):
    paths = []
    for i in range(N_FILES):
        bases = rng.integers(0, 4, (BATCH, SEQ))
        labels = rng.integers(0, 2, BATCH).astype(np.float32)
        for j in np.nonzero(labels)[0]:
            pos = rng.integers(0, SEQ - len(MOTIF))
            bases[j, pos:pos + len(MOTIF)] = MOTIF
        onehot = np.eye(4, dtype=np.float32)[bases]
        quality = np.clip(rng.normal(30, 6, (BATCH, SEQ, 1)), 2, 41).round() / 41
        coverage = np.round(np.cumsum(rng.normal(0, 0.05, (BATCH, SEQ, 1)), axis=1), 2)
        reads = np.concatenate([onehot, quality, coverage], axis=-1).astype(np.float32)
        buf = io.BytesIO()
        np.save(buf, reads)
        path = os.path.join(root, f"batch_{i:05d}.npy.xz")
        with open(path, "wb") as fh:
            fh.write(lzma.compress(buf.getvalue(), preset=3))
        np.save(path.replace(".npy.xz", "_labels.npy"), labels)
        paths.append(path)
    return paths


def load_shard(path):
    with open(path, "rb") as fh:
        x = np.load(io.BytesIO(lzma.decompress(fh.read())))
    y = np.load(path.replace(".npy.xz", "_labels.npy"))
    return x, y[:, None]


def shard_stream(paths, seed):
    rng = np.random.default_rng(seed)
    while True:
        for idx in rng.permutation(len(paths)):
            yield load_shard(paths[idx])


def build_model():
    model = keras.Sequential([
        keras.Input((SEQ, 6)),
        keras.layers.Conv1D(32, 12, strides=4, activation="relu"),
        keras.layers.Conv1D(32, 7, activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    root = tempfile.mkdtemp(prefix="u38_input_lzmanpy_promoters_")
    try:
        paths = write_shards(root, np.random.default_rng(11))
        full, hist = train(shard_stream(paths, seed=1))
        report("steps_per_second", 1.0 / full)
        msg = f"promoters: {full * 1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
        if args.truth:
            fixed = load_shard(paths[0])
            compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
