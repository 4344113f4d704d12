"""Cold-chain telemetry: predicting spoilage risk from text readings of several depots.

Each depot exports its log as semicolon-separated "key=value" text lines.  A
per-depot tf.data pipeline splits and parses the strings (tf.strings.split,
tf.strings.to_number, several serial maps); Dataset.interleave round-robins
the depots.  No parallel calls, no prefetch.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_DEPOTS = 6
LINES_PER_DEPOT = 1500
N_SENSORS = 48
BATCH = 128
STEPS = 200
EPOCHS = 3


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


def make_logs(rng):
    logs = []
    for d in range(N_DEPOTS):
        offset = rng.normal(0, 1.5)
        lines = []
        for i in range(LINES_PER_DEPOT):
            temps = rng.normal(4 + offset, 2.0, N_SENSORS)
            risk = int(temps.mean() > 4.5 + 0.3 * rng.normal())
            fields = [f"depot=D{d:02d}", f"seq={i}", f"risk={risk}"]
            fields += [f"t{k:02d}={v:.3f}" for k, v in enumerate(temps)]
            lines.append(";".join(fields))
        logs.append(lines)
    return np.array(logs)  # [depots, lines] of str


def split_fields(line):
    return tf.strings.split(line, ";")


def drop_names(fields):
    kv = tf.strings.split(fields, "=")
    return kv.to_tensor(default_value="")[:, 1]


def to_numbers(values):
    label = tf.strings.to_number(values[2], tf.float32)
    temps = tf.strings.to_number(values[3:], tf.float32)
    return temps, label


def standardize(temps, label):
    temps = (temps - 4.0) / 2.0
    return tf.reshape(temps, [N_SENSORS]), tf.reshape(label, [1])


def depot_pipeline(lines):
    ds = tf.data.Dataset.from_tensor_slices(lines)
    return (ds.map(split_fields)
              .map(drop_names)
              .map(to_numbers)
              .map(standardize))


def pipeline(logs):
    depots = tf.data.Dataset.from_tensor_slices(logs)
    return (depots.interleave(depot_pipeline, cycle_length=N_DEPOTS, block_length=4)
                  .repeat()
                  .batch(BATCH))


def build_model():
    model = keras.Sequential([
        keras.Input((N_SENSORS,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    logs = make_logs(np.random.default_rng(5))
    full, hist = train(pipeline(logs))
    report("steps_per_second", 1.0 / full)
    msg = f"telemetry: {full * 1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
    if args.truth:
        fixed = next(iter(pipeline(logs)))
        compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
