"""Bearing fault classification from raw accelerometer windows."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_RECORDINGS = 20000
WINDOW = 2048
N_BANDS = 64
N_CHANNELS = 6
N_CLASSES = 4
BATCH_SIZE = 64
STEPS_PER_EPOCH = 40
EPOCHS = 3

rng = np.random.default_rng(11)
LABELS = rng.integers(0, N_CLASSES, size=N_RECORDINGS).astype("int32")
FAULT_FREQS = [0.0, 0.031, 0.057, 0.083]


def load_window(idx):
    r = np.random.default_rng(int(idx))
    t = np.arange(WINDOW)
    label = LABELS[idx]
    sig = np.sin(2 * np.pi * 0.011 * t) + 0.4 * r.standard_normal(WINDOW)
    if label:
        sig += 0.6 * np.sin(2 * np.pi * FAULT_FREQS[label] * t) * (r.random(WINDOW) > 0.7)
    return sig.astype("float32")


def extract_features(idx):
    idx = int(idx.numpy())
    sig = load_window(idx)
    frame = 256
    hop = 256
    n_frames = (WINDOW - frame) // hop + 1
    feats = np.zeros((N_BANDS, N_CHANNELS), dtype="float32")
    band_edges = np.linspace(0, frame // 2, N_BANDS + 1).astype(int)
    spec_sum = np.zeros(frame // 2 + 1)
    for k in range(n_frames):
        seg = sig[k * hop : k * hop + frame] * np.hanning(frame)
        spec_sum += np.abs(np.fft.rfft(seg))
    spec_sum /= n_frames
    env = np.abs(sig).reshape(N_BANDS, -1)
    coarse = sig[::8]
    crossings = 0
    peaks = []
    prev = coarse[0]
    for i in range(1, len(coarse) - 1):
        cur = coarse[i]
        if (prev < 0) != (cur < 0):
            crossings += 1
        if cur > prev and cur > coarse[i + 1] and cur > 1.0:
            peaks.append(i)
        prev = cur
    for b in range(N_BANDS):
        band = spec_sum[band_edges[b] : band_edges[b + 1] + 1]
        feats[b, 0] = np.log1p(band.mean())
        feats[b, 1] = np.log1p(band.max())
    feats[:, 2] = env.mean(axis=1)
    feats[:, 3] = env.std(axis=1)
    feats[:, 4] = crossings / len(coarse)
    feats[:, 5] = len(peaks) / 12.0
    return feats, LABELS[idx]


def tf_extract(idx):
    feats, label = tf.py_function(extract_features, [idx], [tf.float32, tf.int32])
    feats.set_shape((N_BANDS, N_CHANNELS))
    label.set_shape(())
    return feats, label


def make_dataset(indices):
    ds = tf.data.Dataset.from_tensor_slices(indices)
    ds = ds.shuffle(4096, seed=3)
    ds = ds.map(tf_extract, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(BATCH_SIZE, drop_remainder=True).repeat()
    return ds.prefetch(tf.data.AUTOTUNE)


def build_model():
    inputs = keras.Input(shape=(N_BANDS, N_CHANNELS))
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    train_idx = np.arange(N_RECORDINGS, dtype="int64")
    train_ds = make_dataset(train_idx)

    model = build_model()
    timer = StepTimer()
    model.fit(
        train_ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=2
    )
    full = timer.seconds_per_step()
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(
            cached, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer2], verbose=2
        )
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_out({"truth_input_fraction": frac})
        summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
