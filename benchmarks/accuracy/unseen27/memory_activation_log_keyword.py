"""Keyword-spotting model on MFCC-like frames, logging hidden activations for later analysis."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

FRAMES = 98
N_MFCC = 40
N_KEYWORDS = 12
N_CLIPS = 16384
BATCH_SIZE = 64
EPOCHS = 1
HIDDEN = 200


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


class ActivationRecorder(keras.callbacks.Callback):
    """Keeps the encoder output for every training batch so we can study drift later."""

    def __init__(self, x, layer_name, batch_size):
        super().__init__()
        self.x = x
        self.layer_name = layer_name
        self.batch_size = batch_size
        self.history = []

    def on_train_begin(self, logs=None):
        layer = self.model.get_layer(self.layer_name)
        self.probe = keras.Model(self.model.inputs, layer.output)

    def on_train_batch_end(self, batch, logs=None):
        xb = self.x[batch * self.batch_size : (batch + 1) * self.batch_size]
        self.history.append(self.probe(xb, training=False))


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def make_clips(rng):
    y = rng.integers(0, N_KEYWORDS, N_CLIPS)
    x = rng.normal(0, 1, (N_CLIPS, FRAMES, N_MFCC)).astype(np.float32)
    bands = np.arange(N_MFCC)
    for k in range(N_KEYWORDS):
        idx = y == k
        x[idx, 30:60, :] += (np.sin(bands * (k + 1) / 6.0) * 1.5).astype(np.float32)
    return x, y


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def build_model():
    inputs = keras.Input(shape=(FRAMES, N_MFCC))
    x = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv1D(HIDDEN, 3, padding="same", activation="relu", name="encoder")(x)
    x = keras.layers.Conv1D(128, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    outputs = keras.layers.Dense(N_KEYWORDS, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(x, y, fit_data):
    model = build_model()
    recorder = ActivationRecorder(x, "encoder", BATCH_SIZE)
    clock = StepClock()
    steps = N_CLIPS // BATCH_SIZE
    if fit_data is None:
        model.fit(x, y, batch_size=BATCH_SIZE, epochs=EPOCHS, shuffle=False,
                  callbacks=[recorder, clock], verbose=0)
    else:
        model.fit(fit_data, epochs=EPOCHS, steps_per_epoch=steps, callbacks=[recorder, clock],
                  verbose=0)
    print(f"recorded {len(recorder.history)} activation batches, process RSS {rss_mb():.0f} MB")
    return float(np.mean(np.diff(clock.times)[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    x, y = make_clips(np.random.default_rng(0))
    print(f"start RSS {rss_mb():.0f} MB")
    full = train(x, y, None)
    append_result(steps_per_second=1.0 / full)
    msg = f"keyword: {1.0 / full:.2f} steps/s"

    if args.truth:
        cached = tf.data.Dataset.from_tensors((x[:BATCH_SIZE], y[:BATCH_SIZE])).repeat()
        compute = train(x, y, cached)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
