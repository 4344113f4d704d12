"""Seismic event classifier (earthquake / quarry blast / noise) on 3-component spectrograms."""

import argparse
import json
import os
import time

import numpy as np
from scipy import signal

import keras
import tensorflow as tf

FS_RAW = 200.0
FS = 100.0
TRACE_LEN = 6000  # 60 s at 100 Hz
N_CLASSES = 3
BATCH_SIZE = 16
TRAIN_STEPS = 110
LEARNING_RATE = 3e-4
SEED = 11


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def mean_step_seconds(stamps, start, skip=5):
    times = [start] + stamps
    durations = np.diff(times)[skip:]
    return float(np.mean(durations))


# ---------------------------------------------------------------- data
def synth_trace(rng, label):
    t = np.arange(2 * TRACE_LEN) / FS_RAW
    trace = rng.normal(0, 0.05, size=(3, 2 * TRACE_LEN))
    trace += 0.02 * np.sin(2 * np.pi * rng.uniform(0.1, 0.3) * t)
    if label < 2:
        p_arrival = rng.uniform(5, 20)
        s_arrival = p_arrival + rng.uniform(3, 15)
        f_p = 6.0 if label == 0 else 12.0
        for comp in range(3):
            env_p = np.where(t > p_arrival, np.exp(-(t - p_arrival) / 4.0), 0.0)
            env_s = np.where(t > s_arrival, np.exp(-(t - s_arrival) / 8.0), 0.0)
            trace[comp] += env_p * np.sin(2 * np.pi * f_p * t + rng.uniform(0, 6))
            if label == 0 or comp == 2:
                trace[comp] += 1.5 * env_s * np.sin(2 * np.pi * 3.0 * t + rng.uniform(0, 6))
    sos = signal.butter(4, [1.0, 20.0], btype="bandpass", fs=FS_RAW, output="sos")
    trace = signal.sosfiltfilt(sos, trace, axis=-1)
    trace = signal.resample_poly(trace, 1, 2, axis=-1)
    trace = signal.detrend(trace, axis=-1)
    _, _, spec = signal.stft(trace, fs=FS, nperseg=128, noverlap=64, axis=-1)
    spec = np.log1p(np.abs(spec))
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    return np.transpose(spec, (1, 2, 0)).astype("float32")


def event_stream(seed):
    rng = np.random.default_rng(seed)
    while True:
        label = int(rng.integers(0, N_CLASSES))
        yield synth_trace(rng, label), np.int32(label)


SPEC_SHAPE = synth_trace(np.random.default_rng(0), 0).shape


def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        lambda: event_stream(seed),
        output_signature=(
            tf.TensorSpec(SPEC_SHAPE, tf.float32),
            tf.TensorSpec((), tf.int32),
        ),
    )
    return ds.batch(BATCH_SIZE)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=SPEC_SHAPE)
    x = inputs
    for filters in (16, 36, 64):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.3)(x)
    outputs = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inputs, outputs, name="seismic_cnn")


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    optimizer = keras.optimizers.Adam(LEARNING_RATE)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(y, logits)
        return loss

    stamps = []
    start = time.perf_counter()
    for step, (x, y) in enumerate(dataset.take(TRAIN_STEPS)):
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss:.4f}  acc {float(acc.result()):.3f}")
    return mean_step_seconds(stamps, start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()
    print("spectrogram shape:", SPEC_SHAPE)

    sec = train(make_dataset(SEED))
    append_result(steps_per_second=1.0 / sec)
    summary = f"seismic: {sec * 1000:.1f} ms/step"

    if args.truth:
        batch = next(iter(make_dataset(SEED + 1)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
