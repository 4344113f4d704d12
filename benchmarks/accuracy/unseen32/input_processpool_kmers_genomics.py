import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Sequencing reads: k-mer count vectors computed in pure Python by a
# concurrent.futures.ProcessPoolExecutor, feeding a custom tf.function training loop.
import concurrent.futures as cf
import itertools

BATCH, STEPS, K = 64, 400, 5
KMERS = {"".join(p): i for i, p in enumerate(itertools.product("ACGT", repeat=K))}


def make_batch(seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((BATCH, len(KMERS)), np.float32)
    y = np.zeros((BATCH,), np.float32)
    for b in range(BATCH):
        read = "".join(rng.choice(list("ACGT"), size=1500))
        for i in range(len(read) - K + 1):
            x[b, KMERS[read[i:i + K]]] += 1.0
        y[b] = float(read.count("GC") > 94)
    return x / 1500.0, y


def build_model():
    return keras.Sequential([keras.Input((len(KMERS),)),
                             keras.layers.Dense(1024, activation="relu"),
                             keras.layers.Dense(1024, activation="relu"),
                             keras.layers.Dense(1)])


def train(batches):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    lossf = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True)[:, 0])
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times = []
    for x, y in batches:
        float(step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        full = train(pool.map(make_batch, range(STEPS)))
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        x, y = make_batch(10_000)
        comp = train((x, y) for _ in range(STEPS))
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"input_processpool_kmers_genomics: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
