"""Wind-turbine fault detection from SCADA exports.

Ten-minute SCADA records (80 sensor columns plus a fault label) are exported
as CSV shards into a temporary folder and read back with
``tf.data.experimental.make_csv_dataset``, which parses the text on the fly.
"""
import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import pandas as pd
import tensorflow as tf
import keras

BATCH = 256
STEPS_PER_EPOCH = 120
EPOCHS = 3
N_SENSORS = 80
N_ROWS = 60000
N_SHARDS = 6


class StepTimer(keras.callbacks.Callback):
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


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def write_scada(folder, seed=0):
    rng = np.random.default_rng(seed)
    cols = [f"sensor_{i:02d}" for i in range(N_SENSORS)]
    per = N_ROWS // N_SHARDS
    for s in range(N_SHARDS):
        x = rng.normal(0, 1, size=(per, N_SENSORS))
        fault = (x[:, 3] + 0.5 * x[:, 17] - 0.3 * x[:, 42] > 1.2).astype(np.int64)
        df = pd.DataFrame(x * 12.5 + 40.0, columns=cols)
        df.insert(0, "turbine", rng.integers(1, 40, per))
        df["fault"] = fault
        df.to_csv(os.path.join(folder, f"scada_{s:02d}.csv"), index=False, float_format="%.5f")
    return cols


def make_dataset(folder, cols):
    ds = tf.data.experimental.make_csv_dataset(
        os.path.join(folder, "scada_*.csv"), batch_size=BATCH, label_name="fault",
        select_columns=cols + ["fault"], num_epochs=None, shuffle=True,
        shuffle_buffer_size=2000, shuffle_seed=0, num_parallel_reads=1, prefetch_buffer_size=2)

    def pack(features, label):
        x = tf.stack([features[c] for c in cols], axis=1)
        x = (x - 40.0) / 12.5
        return x, tf.cast(label, tf.float32)

    return ds.map(pack)


def build_model():
    inp = keras.Input((N_SENSORS,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def train(ds):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="u29_turbine_")
    try:
        cols = write_scada(folder)
        ds = make_dataset(folder, cols)
        full = train(ds)
        report("steps_per_second", 1.0 / full)
        msg = f"turbine: {1.0 / full:.2f} steps/s"
        if args.truth:
            batch = next(iter(ds))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
