"""Day-ahead electricity load forecasting with a stacked LSTM."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SERIES = 2048
WINDOW = 64
HORIZON = 24
N_FEATURES = 8
BATCH_SIZE = 64
EPOCHS = 3
STEPS_PER_EPOCH = N_SERIES // BATCH_SIZE

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(42)
hours = np.arange(WINDOW + HORIZON)
phase = rng.uniform(0, 2 * np.pi, size=(N_SERIES, 1))
level = rng.uniform(50, 150, size=(N_SERIES, 1))
load = level * (1 + 0.3 * np.sin(2 * np.pi * hours / 24 + phase)) + rng.normal(
    0, 5, (N_SERIES, WINDOW + HORIZON)
)
temp = 15 + 10 * np.sin(2 * np.pi * hours / 24 + phase + 1.0)
calendar = np.stack(
    [np.sin(2 * np.pi * hours / 24), np.cos(2 * np.pi * hours / 24), (hours // 24) % 7 / 6.0], -1
)
X = np.concatenate(
    [
        (load[:, :WINDOW, None] - 100) / 50,
        (temp[:, :WINDOW, None] - 15) / 10,
        np.broadcast_to(calendar[None, :WINDOW], (N_SERIES, WINDOW, 3)),
        rng.normal(0, 1, (N_SERIES, WINDOW, N_FEATURES - 5)),
    ],
    axis=-1,
).astype(np.float32)
Y = ((load[:, WINDOW:] - 100) / 50).astype(np.float32)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((WINDOW, N_FEATURES))
    x = keras.layers.LSTM(192, return_sequences=True)(inp)
    x = keras.layers.LSTM(192, return_sequences=True)(x)
    x = keras.layers.LSTM(96)(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(HORIZON)(x)
    model = keras.Model(inp, out)
    model.compile(keras.optimizers.Adam(1e-3), "mse", metrics=["mae"])
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self):
        return (self.times[-1] - self.times[5]) / (len(self.times) - 6)


model = build_model()
model.summary()
timer = StepTimer()
model.fit(X, Y, batch_size=BATCH_SIZE, epochs=EPOCHS, callbacks=[timer], verbose=2)
full = timer.seconds_per_step()
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    cached = tf.data.Dataset.from_tensors((X[:BATCH_SIZE], Y[:BATCH_SIZE])).repeat()
    model2 = build_model()
    timer2 = StepTimer()
    model2.fit(
        cached, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[timer2], verbose=2
    )
    compute = timer2.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
