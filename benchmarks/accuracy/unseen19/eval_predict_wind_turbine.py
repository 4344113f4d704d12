"""Wind turbine power-curve model: short training, then score a full year of SCADA windows."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--train-windows", type=int, default=16384)
parser.add_argument("--score-windows", type=int, default=250000)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

WINDOW = 36  # 6 hours of 10-minute SCADA records
CHANNELS = [
    "wind_speed",
    "wind_dir_sin",
    "wind_dir_cos",
    "ambient_temp",
    "nacelle_temp",
    "rotor_rpm",
    "pitch",
    "yaw_err",
]


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((int(self.model.optimizer.iterations.numpy()), time.perf_counter()))

    def seconds_per_step(self, skip=5):
        marks = [m for m in self.marks if m[0] >= skip]
        return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


def scada_windows(n, seed):
    r = np.random.default_rng(seed)
    x = r.normal(size=(n, WINDOW, len(CHANNELS))).astype(np.float32)
    ws = np.abs(x[:, -1, 0] * 4 + 8)
    power = np.clip((ws - 3) ** 3 / 1000, 0, 2.5) + r.normal(0, 0.05, n)
    return x, power.astype(np.float32)


x_train, y_train = scada_windows(args.train_windows, 1)
x_year, _ = scada_windows(args.score_windows, 2)
train_ds = (
    tf.data.Dataset.from_tensor_slices((x_train, y_train))
    .cache()
    .shuffle(len(x_train))
    .batch(args.batch_size)
    .prefetch(tf.data.AUTOTUNE)
)


def build_model():
    inputs = keras.Input(shape=(WINDOW, len(CHANNELS)))
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv1D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    return model


clock = StepClock()
model = build_model()
t_train = time.perf_counter()
model.fit(train_ds, epochs=args.epochs, callbacks=[clock], verbose=2)
t_train = time.perf_counter() - t_train
sec_full = clock.seconds_per_step()
report("steps_per_second", 1.0 / sec_full)

t_pred = time.perf_counter()
power_pred = model.predict(x_year, batch_size=args.batch_size, verbose=0)
t_pred = time.perf_counter() - t_pred
first_step_end = clock.marks[0][1]
train_after_first = clock.marks[-1][1] - first_step_end
print(
    f"wind farm: train {t_train:.1f}s ({sec_full * 1000:.1f} ms/step), scored {len(x_year)} windows in {t_pred:.1f}s, "
    f"predicted energy {power_pred.sum() / 6:.0f} MWh, scoring share {t_pred / (t_pred + train_after_first):.2f}"
)

if args.truth:
    batch = (x_train[: args.batch_size], y_train[: args.batch_size])
    clock2 = StepClock()
    model2 = build_model()
    steps = int(np.ceil(args.train_windows / args.batch_size))
    model2.fit(
        tf.data.Dataset.from_tensors(batch).repeat(),
        epochs=args.epochs,
        steps_per_epoch=steps,
        callbacks=[clock2],
        verbose=0,
    )
    sec_cached = clock2.seconds_per_step()
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
    )
