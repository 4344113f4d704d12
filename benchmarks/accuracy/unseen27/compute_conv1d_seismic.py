"""Seismic event detection: deep residual Conv1D on 3-component waveforms, custom loop."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

WAVE_LEN = 1024
CHANNELS = 3
N_WAVES = 1024
BATCH_SIZE = 32
STEPS = 50
FILTERS = 32
N_BLOCKS = 6


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def make_waveforms(rng):
    t = np.arange(WAVE_LEN) / 100.0
    x = rng.normal(0, 1, (N_WAVES, WAVE_LEN, CHANNELS)).astype(np.float32)
    y = rng.integers(0, 2, N_WAVES).astype(np.float32)
    for i in np.where(y == 1)[0]:
        onset = rng.uniform(2, 15)
        env = np.where(t > onset, np.exp(-(t - onset) * 0.8), 0.0)
        x[i] += (4 * env * np.sin(2 * np.pi * rng.uniform(2, 8) * t))[:, None].astype(np.float32)
    return x, y[:, None]


def res_block(x, filters, dilation):
    h = keras.layers.Conv1D(filters, 7, padding="same", dilation_rate=dilation)(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.Activation("relu")(h)
    h = keras.layers.Conv1D(filters, 7, padding="same", dilation_rate=dilation)(h)
    h = keras.layers.BatchNormalization()(h)
    return keras.layers.Activation("relu")(x + h)


def build_model():
    inputs = keras.Input(shape=(WAVE_LEN, CHANNELS))
    x = keras.layers.Conv1D(FILTERS, 9, padding="same", activation="relu")(inputs)
    for i in range(N_BLOCKS):
        x = res_block(x, FILTERS, dilation=2 ** (i % 4))
        if i % 2 == 1:
            x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inputs, outputs)


def train(dataset):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step, (x, y) in enumerate(dataset.take(STEPS)):
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if step % 10 == 0:
            print(f"step {step:3d} loss {loss:.4f}")
    return float(np.mean(np.diff(times)[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    x, y = make_waveforms(np.random.default_rng(0))
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .cache()
        .shuffle(N_WAVES, seed=0)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )

    full = train(ds)
    append_result(steps_per_second=1.0 / full)
    msg = f"seismic: {1.0 / full:.2f} steps/s over {STEPS} steps of {BATCH_SIZE}"

    if args.truth:
        batch = (tf.constant(x[:BATCH_SIZE]), tf.constant(y[:BATCH_SIZE]))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
