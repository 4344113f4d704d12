"""Seismic event classification from 3-component waveforms.

Each trace is detrended, band-pass filtered and turned into a log spectrogram
with SciPy, then a small 2D CNN classifies the event type.
"""

import argparse
import json
import os
import time

import numpy as np
import scipy.signal
import tensorflow as tf
import keras

N_TRACES = 2048
TRACE_LEN = 3000  # 30 s at 100 Hz
FS = 100.0
N_CLASSES = 4
BATCH_SIZE = 32
STEPS_PER_EPOCH = 48
EPOCHS = 5
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(7)

# ---------------------------------------------------------------- data
labels = rng.integers(0, N_CLASSES, size=N_TRACES).astype(np.int32)
t = np.arange(TRACE_LEN) / FS
traces = rng.standard_normal((N_TRACES, 3, TRACE_LEN)).astype(np.float32) * 1.5
onsets = rng.integers(500, 2000, size=N_TRACES)
for i in range(N_TRACES):
    f0 = 2.0 + 3.0 * labels[i]
    env = np.exp(-np.clip(t - onsets[i] / FS, 0, None) / 4.0) * (t > onsets[i] / FS)
    traces[i] += (env * np.sin(2 * np.pi * f0 * t)).astype(np.float32)
traces += np.linspace(0, 1, TRACE_LEN, dtype=np.float32)  # instrument drift

SOS = scipy.signal.butter(4, [1.0, 20.0], btype="bandpass", fs=FS, output="sos")


def preprocess_trace(index):
    i = int(index.numpy())
    tr = scipy.signal.detrend(traces[i], axis=-1)
    tr = scipy.signal.sosfiltfilt(SOS, tr, axis=-1)
    tr = tr / (np.abs(tr).max(axis=-1, keepdims=True) + 1e-6)
    _, _, spec = scipy.signal.spectrogram(tr, fs=FS, nperseg=128, noverlap=96, axis=-1)
    spec = np.log1p(spec[:, :64, :]).transpose(1, 2, 0)
    spec = (spec - spec.mean()) / (spec.std() + 1e-6)
    return spec.astype(np.float32), labels[i]


SPEC_SHAPE = preprocess_trace(tf.constant(0))[0].shape


def tf_preprocess(index):
    spec, label = tf.py_function(preprocess_trace, [index], [tf.float32, tf.int32])
    spec.set_shape(SPEC_SHAPE)
    label.set_shape(())
    return spec, label


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(N_TRACES))
    ds = ds.shuffle(N_TRACES, seed=1).repeat()
    ds = ds.map(tf_preprocess)
    ds = ds.batch(BATCH_SIZE, drop_remainder=True)
    return ds.prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=SPEC_SHAPE)
    x = inputs
    for filters in (16, 32, 64):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inputs, outputs)


def train(dataset, tag):
    model = build_model()
    optimizer = keras.optimizers.Adam(LR)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    iterator = iter(dataset)

    @tf.function
    def train_epoch(iterator):
        total = tf.constant(0.0)
        for _ in tf.range(STEPS_PER_EPOCH):
            x, y = next(iterator)
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += loss
        return total / tf.cast(STEPS_PER_EPOCH, tf.float32)

    epoch_times = []
    for epoch in range(EPOCHS):
        t0 = time.perf_counter()
        loss = float(train_epoch(iterator))
        epoch_times.append(time.perf_counter() - t0)
        print(f"[{tag}] epoch {epoch + 1}/{EPOCHS} loss={loss:.4f} time={epoch_times[-1]:.2f}s")
    return float(np.mean(epoch_times[1:])) / STEPS_PER_EPOCH


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


full = train(make_dataset(), "train")
write_out({"steps_per_second": 1.0 / full})
summary = f"seismic: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat(), "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
