"""Industrial pump fault detection from gzip-compressed sensor log exports.

Each shard is a gzip CSV written by the plant historian (timestamp, pump id,
40 sensor channels, fault code).  The training pipeline reads the shards with
tf.data.TextLineDataset(compression_type="GZIP"), parses every line with a
serial map (tf.io.decode_csv + scaling), batches and feeds model.fit.
"""
import argparse
import gzip
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_CHANNELS = 40
N_SHARDS = 6
ROWS_PER_SHARD = 12000
BATCH = 128
STEPS_PER_EPOCH = 200
EPOCHS = 3
N_CLASSES = 5


def write_shards(folder, rng):
    paths = []
    base = rng.normal(size=(N_CLASSES, N_CHANNELS))
    for s in range(N_SHARDS):
        path = os.path.join(folder, f"pumps-{s:03d}.csv.gz")
        codes = rng.integers(0, N_CLASSES, size=ROWS_PER_SHARD)
        vals = base[codes] * 3 + rng.normal(size=(ROWS_PER_SHARD, N_CHANNELS)) * 10 + 50
        with gzip.open(path, "wt") as f:
            f.write("ts,pump," + ",".join(f"ch{i}" for i in range(N_CHANNELS)) + ",fault\n")
            for r in range(ROWS_PER_SHARD):
                f.write(f"{1700000000 + r},P{s:02d}," + ",".join(f"{v:.3f}" for v in vals[r]) + f",{codes[r]}\n")
        paths.append(path)
    return paths


def parse_line(line):
    defaults = [[0], [""]] + [[0.0]] * N_CHANNELS + [[0]]
    cols = tf.io.decode_csv(line, record_defaults=defaults)
    x = tf.stack(cols[2:2 + N_CHANNELS])
    x = (x - 50.0) / 10.0
    return x, cols[-1]


def make_dataset(paths):
    ds = tf.data.TextLineDataset(paths, compression_type="GZIP").skip(0)
    ds = ds.filter(lambda l: tf.logical_not(tf.strings.regex_full_match(l, "ts,.*")))
    ds = ds.map(parse_line)
    return ds.shuffle(2048, seed=0).batch(BATCH, drop_remainder=True).repeat()


def build_model():
    inp = keras.Input((N_CHANNELS,))
    x = inp
    for _ in range(3):
        x = keras.layers.Dense(384, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH,
                     callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tf.random.set_seed(0)
    tmp = tempfile.mkdtemp(prefix="u30_sensorlogs_")
    try:
        paths = write_shards(tmp, np.random.default_rng(0))
        full, loss = train(make_dataset(paths))
        emit({"steps_per_second": 1.0 / full})
        msg = f"sensorlogs: {EPOCHS}x{STEPS_PER_EPOCH} steps, {full * 1000:.1f} ms/step, loss {loss:.3f}"
        if args.truth:
            batch = next(iter(make_dataset(paths)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", compute-only {compute * 1000:.1f} ms/step, truth {frac:.3f}"
        print(msg + f", wall {time.perf_counter() - t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
