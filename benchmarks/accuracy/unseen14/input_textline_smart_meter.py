"""Smart-meter anomaly classifier trained straight from daily CSV exports.

Each line: meter_id, region, tariff, 96 quarter-hour kWh readings, label.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_FILES = 8
ROWS_PER_FILE = 4000
N_READINGS = 96
REGIONS = ["north", "south", "east", "west", "central"]
TARIFFS = ["flat", "tou", "ev", "solar"]
BATCH_SIZE = 128
STEPS = 700
SEED = 3


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def write_exports(folder, rng):
    paths = []
    header = "meter_id,region,tariff," + ",".join(f"q{i}" for i in range(N_READINGS)) + ",anomaly"
    t = np.arange(N_READINGS)
    for f in range(N_FILES):
        path = os.path.join(folder, f"meters_day{f:02d}.csv")
        load = 0.3 + 0.2 * np.sin(2 * np.pi * (t - 30) / 96)
        readings = load[None, :] * rng.gamma(2.0, 0.5, size=(ROWS_PER_FILE, 1))
        readings += rng.normal(0, 0.05, size=readings.shape)
        anomaly = rng.random(ROWS_PER_FILE) < 0.15
        readings[anomaly, 40:60] += 1.5
        with open(path, "w") as fh:
            fh.write(header + "\n")
            for r in range(ROWS_PER_FILE):
                vals = ",".join(f"{v:.4f}" for v in readings[r])
                fh.write(
                    f"M{f}{r:06d},{REGIONS[r % 5]},{TARIFFS[r % 4]},{vals},{int(anomaly[r])}\n"
                )
        paths.append(path)
    return paths


RECORD_DEFAULTS = [[""], [""], [""]] + [[0.0]] * N_READINGS + [[0]]
region_table = tf.lookup.StaticHashTable(
    tf.lookup.KeyValueTensorInitializer(REGIONS, list(range(len(REGIONS)))), default_value=0
)
tariff_table = tf.lookup.StaticHashTable(
    tf.lookup.KeyValueTensorInitializer(TARIFFS, list(range(len(TARIFFS)))), default_value=0
)


def parse_line(line):
    fields = tf.io.decode_csv(line, RECORD_DEFAULTS)
    readings = tf.stack(fields[3 : 3 + N_READINGS])
    daily = tf.reduce_sum(readings)
    readings = readings / (tf.reduce_max(readings) + 1e-3)
    region = tf.one_hot(region_table.lookup(fields[1]), len(REGIONS))
    tariff = tf.one_hot(tariff_table.lookup(fields[2]), len(TARIFFS))
    meter_num = tf.strings.to_number(tf.strings.substr(fields[0], 2, 6), tf.float32) / 1e6
    extra = tf.concat([region, tariff, [daily / 50.0, meter_num]], axis=0)
    features = tf.concat([readings, extra], axis=0)
    return features, tf.cast(fields[-1], tf.float32)


def make_dataset(paths):
    ds = tf.data.TextLineDataset(paths).skip(1)
    ds = ds.filter(lambda line: tf.strings.substr(line, 0, 1) == "M")
    ds = ds.shuffle(2048, seed=SEED).repeat()
    ds = ds.map(parse_line)
    ds = ds.batch(BATCH_SIZE)
    return ds


N_FEATURES = N_READINGS + len(REGIONS) + len(TARIFFS) + 2


def build_model():
    inp = keras.Input(shape=(N_FEATURES,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dropout(0.2)(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    workdir = tempfile.mkdtemp(prefix="u14_input_textline_smart_meter_")
    try:
        paths = write_exports(workdir, rng)
        print(f"wrote {len(paths)} csv exports to {workdir}")

        model = build_model()
        clock = StepClock()
        t0 = time.perf_counter()
        hist = model.fit(
            make_dataset(paths), epochs=1, steps_per_epoch=args.steps, callbacks=[clock], verbose=0
        )
        full = clock.seconds_per_step()
        print(
            f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
            f"loss={hist.history['loss'][-1]:.4f}"
        )
        out_path = os.environ.get("ACCURACY_OUT")
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

        if args.truth:
            batch = next(iter(make_dataset(paths)))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            clock2 = StepClock()
            model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
            compute = clock2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            if out_path:
                with open(out_path, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            print(f"truth: full={full * 1000:.2f}ms compute={compute * 1000:.2f}ms frac={frac:.2f}")
        print(f"smart meter MLP: {1.0 / full:.1f} steps/s ({full * 1000:.2f} ms/step)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
