"""Seismic event classification (earthquake / blast / noise) from 3-component waveforms."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_TRACES = 1200
TRACE_LEN = 1500
N_COMPONENTS = 3
N_CLASSES = 3
BATCH_SIZE = 32
EPOCHS = 2
LR = 3e-4


def make_waveforms(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(TRACE_LEN, dtype=np.float32) / 100.0
    x = rng.normal(0, 0.2, size=(N_TRACES, TRACE_LEN, N_COMPONENTS)).astype(np.float32)
    y = rng.integers(0, N_CLASSES, N_TRACES)
    onsets = rng.integers(200, 900, N_TRACES)
    for i in range(N_TRACES):
        if y[i] == 2:
            continue
        freq = 2.0 if y[i] == 0 else 8.0
        s = t[: TRACE_LEN - onsets[i]]
        wave = np.sin(2 * np.pi * freq * s) * np.exp(-s / (4.0 if y[i] == 0 else 1.0))
        x[i, onsets[i] :, :] += wave[:, None] * rng.uniform(0.5, 2.0, N_COMPONENTS)
    return x, y.astype(np.int32)


def build_model():
    inp = keras.Input((TRACE_LEN, N_COMPONENTS))
    x = inp
    for filters in (32, 48, 64, 96, 128):
        x = keras.layers.Conv1D(filters, 7, padding="same", use_bias=False)(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.Activation("relu")(x)
        x = keras.layers.Conv1D(filters, 7, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dropout(0.3)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations = []
        for times in self.epochs:
            durations.extend(np.diff(times).tolist())
        return float(np.mean(durations[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x, y = make_waveforms()
    print(f"waveforms: {x.shape}")
    model = build_model()
    timer = StepTimer()
    model.fit(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=EPOCHS,
        validation_split=0.1,
        callbacks=[timer],
        verbose=2,
    )
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full={full * 1000:.1f} ms/step"
    if args.truth:
        n_train = int(N_TRACES * 0.9)
        steps = int(np.ceil(n_train / BATCH_SIZE))
        batch = (x[:BATCH_SIZE], y[:BATCH_SIZE])
        model = build_model()
        timer = StepTimer()
        model.fit(
            tf.data.Dataset.from_tensors(batch).repeat(),
            epochs=EPOCHS,
            steps_per_epoch=steps,
            callbacks=[timer],
            verbose=2,
        )
        compute = timer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
    print(f"seismic_events: {summary} steps/s={1.0 / full:.2f}")


if __name__ == "__main__":
    main()
