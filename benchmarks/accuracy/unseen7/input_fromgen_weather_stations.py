"""Next-day temperature forecast for a network of weather stations.

Raw station logs arrive as CSV text (one block of hourly readings per station-day).
A Python generator simulates the station, renders the log text, parses it back and
builds normalised features; tf.data.Dataset.from_generator feeds model.fit.
"""

import argparse
import json
import math
import os
import random
import time

import keras
import numpy as np
import tensorflow as tf

HOURS = 24
N_FEATURES = 6
BATCH_SIZE = 64
STEPS_PER_EPOCH = 50
EPOCHS = 4
WARMUP_STEPS = 5

STATIONS = [f"ST{idx:04d}" for idx in range(200)]


def simulate_station_day(rng, station):
    base = 10.0 + 15.0 * math.sin(rng.random() * math.pi)
    lines = ["timestamp,station,temp_c,humidity,pressure_hpa,wind_ms,rain_mm"]
    for hour in range(HOURS):
        temp = base + 6.0 * math.sin((hour - 9) / 24.0 * 2 * math.pi) + rng.gauss(0, 0.8)
        hum = min(100.0, max(5.0, 70 - 1.5 * (temp - base) + rng.gauss(0, 3)))
        pres = 1013 + rng.gauss(0, 4)
        wind = abs(rng.gauss(3, 1.5))
        rain = max(0.0, rng.gauss(-0.5, 1.0))
        lines.append(
            f"2024-03-{rng.randint(1, 28):02d}T{hour:02d}:00:00,{station},"
            f"{temp:.2f},{hum:.1f},{pres:.1f},{wind:.2f},{rain:.2f}"
        )
    return "\n".join(lines), base


def parse_log(text):
    rows = []
    for line in text.splitlines()[1:]:
        ts, station, *vals = line.split(",")
        hour = int(ts[11:13])
        vals = [float(v) for v in vals]
        rows.append([hour / 23.0] + vals)
    arr = np.asarray(rows, dtype=np.float32)
    # per-column robust normalisation, like a typical pandas-free preprocessing step
    med = np.median(arr, axis=0)
    iqr = np.percentile(arr, 75, axis=0) - np.percentile(arr, 25, axis=0) + 1e-3
    return (arr - med) / iqr


def station_records(seed=0):
    rng = random.Random(seed)
    while True:
        station = rng.choice(STATIONS)
        text, base = simulate_station_day(rng, station)
        feats = parse_log(text)
        target = np.float32(base / 25.0 + rng.gauss(0, 0.05))
        yield feats, target


def make_dataset(seed=0):
    ds = tf.data.Dataset.from_generator(
        lambda: station_records(seed),
        output_signature=(
            tf.TensorSpec(shape=(HOURS, N_FEATURES), dtype=tf.float32),
            tf.TensorSpec(shape=(), dtype=tf.float32),
        ),
    )
    return ds.batch(BATCH_SIZE)


def build_model():
    inputs = keras.Input(shape=(HOURS, N_FEATURES))
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.GRU(96, return_sequences=True)(x)
    x = keras.layers.GRU(64)(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs, name="station_forecaster")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


class BatchClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())

    def mean_step(self, skip):
        return float(np.mean(np.diff(self.stamps[skip:])))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    args = parser.parse_args()

    model = build_model()
    model.summary()
    train_ds = make_dataset(seed=1)

    t0 = time.perf_counter()
    history = model.fit(train_ds, epochs=args.epochs, steps_per_epoch=STEPS_PER_EPOCH, verbose=2)
    elapsed = time.perf_counter() - t0
    steps = args.epochs * STEPS_PER_EPOCH
    print(f"final loss {history.history['loss'][-1]:.4f}  {steps / elapsed:.1f} steps/s")
    report("steps_per_second", steps / elapsed)

    if args.truth:
        n = args.epochs * STEPS_PER_EPOCH
        full_clock = BatchClock()
        model.fit(
            make_dataset(seed=2), epochs=1, steps_per_epoch=n, verbose=0, callbacks=[full_clock]
        )
        comp_clock = BatchClock()
        cached = make_dataset(seed=3).take(1).cache().repeat()
        model.fit(cached, epochs=1, steps_per_epoch=n, verbose=0, callbacks=[comp_clock])
        full = full_clock.mean_step(WARMUP_STEPS)
        comp = comp_clock.mean_step(WARMUP_STEPS)
        frac = min(1.0, max(0.0, (full - comp) / full))
        print(
            f"truth: full {full * 1e3:.2f} ms/step, compute {comp * 1e3:.2f} ms/step, input fraction {frac:.3f}"
        )
        report("truth_input_fraction", frac)


if __name__ == "__main__":
    main()
