"""Seismic phase classifier (noise / P / S) trained with a plain eager GradientTape loop."""

import argparse
import json
import os
import time

import numpy as np
import scipy.signal
from scipy.ndimage import uniform_filter1d
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

SAMPLE_RATE = 100
WINDOW = 3000
N_EVENTS = 1500
N_CLASSES = 3


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(7)
raw_waveforms = rng.normal(size=(N_EVENTS, WINDOW, 3)).astype(np.float32)
phase_labels = rng.integers(0, N_CLASSES, size=N_EVENTS).astype(np.int32)
t = np.arange(WINDOW) / SAMPLE_RATE
for i in range(N_EVENTS):
    if phase_labels[i] > 0:
        onset = rng.integers(500, 2500)
        burst = np.exp(-(t[: WINDOW - onset]) * 1.5) * np.sin(
            2 * np.pi * (3 + 4 * phase_labels[i]) * t[: WINDOW - onset]
        )
        raw_waveforms[i, onset:, :] += 4.0 * burst[:, None].astype(np.float32)

freqs = np.fft.rfftfreq(WINDOW, 1.0 / SAMPLE_RATE)
band = ((freqs >= 1.0) & (freqs <= 20.0)).astype(np.float64)
taper = scipy.signal.windows.tukey(WINDOW, 0.05)[:, None]


def featurize(index):
    i = int(index.numpy())
    x = raw_waveforms[i].astype(np.float64)
    x = scipy.signal.detrend(x, axis=0) * taper
    spec = np.fft.rfft(x, axis=0) * band[:, None]
    x = np.fft.irfft(spec, n=WINDOW, axis=0)
    envelope = np.abs(scipy.signal.hilbert(x, axis=0))
    energy = envelope.sum(axis=1)
    sta = uniform_filter1d(energy, 50)
    lta = uniform_filter1d(energy, 1000) + 1e-6
    ratio = (sta / lta)[:, None]
    x = x / (np.abs(x).max(axis=0, keepdims=True) + 1e-6)
    envelope = envelope / (envelope.max(axis=0, keepdims=True) + 1e-6)
    feats = np.concatenate([x, envelope, ratio], axis=1).astype(np.float32)
    return feats, phase_labels[i]


def tf_featurize(index):
    feats, label = tf.py_function(featurize, [index], [tf.float32, tf.int32])
    feats.set_shape((WINDOW, 7))
    label.set_shape(())
    return feats, label


train_ds = (
    tf.data.Dataset.range(N_EVENTS)
    .shuffle(N_EVENTS, seed=1)
    .repeat()
    .map(tf_featurize)
    .batch(args.batch_size, drop_remainder=True)
)


# ---------------- model ----------------
def build_model():
    inputs = keras.Input(shape=(WINDOW, 7))
    x = keras.layers.Conv1D(32, 7, strides=2, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv1D(64, 7, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(128, 5, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inputs, outputs, name="phasenet_lite")


loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train(batches):
    model = build_model()
    optimizer = keras.optimizers.Adam(args.lr)
    step_times = []
    losses = []
    for step, (x, y) in enumerate(batches):
        if step >= args.steps:
            break
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
        step_times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    sec = (step_times[-1] - step_times[4]) / (len(step_times) - 5)
    return sec, losses[-1]


def repeat_batch(batch):
    while True:
        yield batch


start = time.perf_counter()
sec_full, last_loss = train(iter(train_ds))
report("steps_per_second", 1.0 / sec_full)
print(
    f"trained {args.steps} steps in {time.perf_counter() - start:.1f}s, {sec_full * 1000:.1f} ms/step, loss {last_loss:.4f}"
)

if args.truth:
    fixed = next(iter(train_ds))
    sec_cached, _ = train(repeat_batch(fixed))
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms/step, cached {sec_cached * 1000:.1f} ms/step, input fraction {frac:.3f}"
    )
