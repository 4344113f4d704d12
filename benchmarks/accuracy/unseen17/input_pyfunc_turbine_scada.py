"""Fault detection on wind-turbine SCADA windows stored as one CSV per window."""

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

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=90)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--n-files", type=int, default=480)
args = parser.parse_args()

WINDOW = 128
SENSORS = [
    "wind_speed",
    "rotor_rpm",
    "pitch_deg",
    "gen_temp",
    "gearbox_temp",
    "nacelle_dir",
    "power_kw",
    "vibration",
]


def write_windows(root, n):
    rng = np.random.default_rng(7)
    paths, labels = [], []
    stamps = pd.date_range("2024-03-01", periods=WINDOW, freq="10s").astype(str)
    for i in range(n):
        fault = int(rng.random() < 0.3)
        data = rng.normal(size=(WINDOW, len(SENSORS))).cumsum(axis=0) * 0.1
        if fault:
            data[:, 7] += rng.normal(0, 2.0, size=WINDOW)
        df = pd.DataFrame(data, columns=SENSORS)
        df.insert(0, "timestamp", stamps)
        df["turbine_id"] = f"WT{i % 40:03d}"
        path = os.path.join(root, f"window_{i:05d}.csv")
        df.to_csv(path, index=False)
        paths.append(path)
        labels.append(fault)
    return paths, labels


def load_window(path, label):
    df = pd.read_csv(path.numpy().decode(), parse_dates=["timestamp"])
    df = df.sort_values("timestamp").set_index("timestamp")
    raw = df[SENSORS]
    z = (raw - raw.mean()) / (raw.std() + 1e-6)
    roll = raw.rolling(8, min_periods=1).std().fillna(0.0)
    roll = (roll - roll.mean()) / (roll.std() + 1e-6)
    x = np.concatenate([z.to_numpy(np.float32), roll.to_numpy(np.float32)], axis=1)
    return x, np.float32(label.numpy())


def make_dataset(paths, labels, batch_size):
    ds = tf.data.Dataset.from_tensor_slices((paths, np.array(labels, np.float32)))
    ds = ds.shuffle(len(paths), seed=0).repeat()

    def _load(p, lab):
        x, y = tf.py_function(load_window, [p, lab], [tf.float32, tf.float32])
        x.set_shape([WINDOW, 2 * len(SENSORS)])
        y.set_shape([])
        return x, y

    return ds.map(_load).batch(batch_size, drop_remainder=True)


def build_model():
    inp = keras.Input(shape=(WINDOW, 2 * len(SENSORS)))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="binary_crossentropy",
        metrics=["AUC"],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def seconds_per_step(stamps, skip=5):
    gaps = np.diff(stamps)[skip - 1 :]
    return float(np.mean(gaps))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds):
    model = build_model()
    clock = StepClock()
    model.fit(ds, steps_per_epoch=args.steps, epochs=1, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.stamps)


def main():
    tmp = tempfile.mkdtemp(prefix="u17_turbine_")
    try:
        t0 = time.time()
        paths, labels = write_windows(tmp, args.n_files)
        print(f"wrote {len(paths)} SCADA windows in {time.time() - t0:.1f}s")
        ds = make_dataset(paths, labels, args.batch_size)
        full = train(ds)
        write_result({"steps_per_second": 1.0 / full})
        msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            batch = next(iter(ds))
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            compute = train(cached)
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_result({"truth_input_fraction": frac})
            msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
