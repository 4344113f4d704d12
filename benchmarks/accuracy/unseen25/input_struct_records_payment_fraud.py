"""Card-payment fraud model trained from the fixed-width binary export of the switch logs."""

import argparse
import json
import math
import os
import shutil
import struct
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--records", type=int, default=48_000)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

# txn id, timestamp, merchant category, country, amount, 40 behavioural floats, label
RECORD = struct.Struct("<qqhh f 40f b")
N_FEATURES = 40 + 14


def write_records(path, n, rng):
    with open(path, "wb") as f:
        for i in range(n):
            behaviour = rng.standard_normal(40).astype(np.float32)
            amount = float(rng.lognormal(3.5, 1.2))
            label = int(behaviour[:3].sum() + 0.002 * amount > 2.5)
            f.write(
                RECORD.pack(
                    i,
                    1_700_000_000 + int(rng.integers(0, 3e7)),
                    int(rng.integers(0, 800)),
                    int(rng.integers(0, 60)),
                    amount,
                    *behaviour.tolist(),
                    label,
                )
            )


def record_features(fields):
    _, ts, mcc, country, amount = fields[:5]
    behaviour = fields[5:45]
    hour = (ts // 3600) % 24
    weekday = (ts // 86400) % 7
    mean_b = sum(behaviour) / len(behaviour)
    std_b = math.sqrt(sum((b - mean_b) ** 2 for b in behaviour) / len(behaviour))
    ranked = sorted(behaviour)
    extra = [
        math.log1p(amount),
        math.sin(2 * math.pi * hour / 24),
        math.cos(2 * math.pi * hour / 24),
        math.sin(2 * math.pi * weekday / 7),
        math.cos(2 * math.pi * weekday / 7),
        mcc / 800.0,
        country / 60.0,
        float(mcc in (5967, 7995, 4829)),
        mean_b,
        std_b,
        max(behaviour),
        min(behaviour),
        ranked[len(ranked) // 2],
        ranked[3 * len(ranked) // 4] - ranked[len(ranked) // 4],
    ]
    return [(b - mean_b) / (std_b + 1e-6) for b in behaviour] + extra, fields[45]


def record_batches(path, batch_size):
    while True:
        with open(path, "rb") as f:
            xs, ys = [], []
            while True:
                chunk = f.read(RECORD.size)
                if len(chunk) < RECORD.size:
                    break
                x, y = record_features(RECORD.unpack(chunk))
                xs.append(x)
                ys.append(y)
                if len(xs) == batch_size:
                    yield np.asarray(xs, np.float32), np.asarray(ys, np.float32)
                    xs, ys = [], []


def build_model():
    inputs = keras.Input((N_FEATURES,))
    x = keras.layers.Dense(256, activation="relu")(inputs)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer="adam",
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.AUC(from_logits=True)],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def train(data, steps_per_epoch):
    model = build_model()
    timer = StepTimer()
    model.fit(
        data, epochs=args.epochs, steps_per_epoch=steps_per_epoch, callbacks=[timer], verbose=2
    )
    return timer.seconds_per_step()


tmpdir = tempfile.mkdtemp(prefix="u25_input_struct_payments_")
try:
    path = os.path.join(tmpdir, "switch_export.bin")
    write_records(path, args.records, np.random.default_rng(5))
    steps_per_epoch = args.records // args.batch_size

    full = train(record_batches(path, args.batch_size), steps_per_epoch)
    report("steps_per_second", 1.0 / full)
    summary = f"payments: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

    if args.truth:
        xb, yb = next(record_batches(path, args.batch_size))
        cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        compute = train(cached, steps_per_epoch)
        fraction = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", fraction)
        summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
    print(summary)
finally:
    shutil.rmtree(tmpdir, ignore_errors=True)
