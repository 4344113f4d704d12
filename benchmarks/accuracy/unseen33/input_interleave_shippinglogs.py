"""Container dwell-time class prediction from port terminal log lines.

Log lines are held as many small per-terminal shards; a tf.data pipeline
interleaves per-shard from_tensor_slices datasets, each mapped with a
tf.strings parser (regex_replace, split, to_number) before batching.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SHARDS = 48
LINES_PER_SHARD = 400
N_FIELDS = 96
BATCH = 128
STEPS = 300
EPOCHS = 2
N_CLASSES = 4


class StepClock(keras.callbacks.Callback):
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

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def synth_shards(rng):
    weights = rng.normal(size=N_FIELDS)
    shards, labels = [], []
    for s in range(N_SHARDS):
        lines, ys = [], []
        vals = rng.normal(size=(LINES_PER_SHARD, N_FIELDS)) * 10 + 50
        for i in range(LINES_PER_SHARD):
            v = vals[i]
            fields = ";".join(f"sensor_{k}={v[k]:.3f}" for k in range(N_FIELDS))
            lines.append(f"2026-03-{1 + i % 28:02d}T{i % 24:02d}:00:00Z|TERM{s:03d}|{fields}|EOL")
            score = float((v - 50) @ weights)
            ys.append(int(np.digitize(score, [-20, 0, 20])))
        shards.append(lines)
        labels.append(ys)
    return np.array(shards), np.array(labels, dtype=np.int32)


def parse_line(line, label):
    body = tf.strings.split(line, "|")[2]
    body = tf.strings.regex_replace(body, r"sensor_[0-9]+=", "")
    body = tf.strings.regex_replace(body, r"\s+", "")
    nums = tf.strings.to_number(tf.strings.split(body, ";"), out_type=tf.float32)
    nums = (nums - 50.0) / 10.0
    return tf.reshape(nums, [N_FIELDS]), label


def make_dataset(lines, labels):
    lines_t = tf.constant(lines)
    labels_t = tf.constant(labels)

    def shard(i):
        return tf.data.Dataset.from_tensor_slices((lines_t[i], labels_t[i])).map(parse_line)

    ds = tf.data.Dataset.range(N_SHARDS).shuffle(N_SHARDS, seed=1)
    ds = ds.interleave(shard, cycle_length=8, block_length=4)
    return ds.batch(BATCH, drop_remainder=True).repeat()


def make_model():
    inputs = keras.Input((N_FIELDS,))
    h = inputs
    for width in (512, 384, 256):
        h = keras.layers.Dense(width, activation="gelu")(h)
        h = keras.layers.LayerNormalization()(h)
    model = keras.Model(inputs, keras.layers.Dense(N_CLASSES)(h))
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds, clock):
    keras.utils.set_random_seed(5)
    model = make_model()
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return hist, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    lines, labels = synth_shards(np.random.default_rng(0))
    ds = make_dataset(lines, labels)
    clock = StepClock()
    hist, wall = train(ds, clock)
    full = clock.seconds_per_step()
    report(steps_per_second=1.0 / full)
    msg = f"shippinglogs: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, acc {hist.history['accuracy'][-1]:.3f}"
    if args.truth:
        batch = next(iter(ds))
        clock2 = StepClock()
        train(tf.data.Dataset.from_tensors(batch).repeat(), clock2)
        compute = clock2.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
