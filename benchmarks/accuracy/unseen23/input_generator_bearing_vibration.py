"""Bearing fault classification from raw accelerometer recordings.

Spectral + rolling-statistics features are computed per recording in a Python
generator and the model is trained with a whole-epoch tf.function.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from scipy import signal as sps

SIGNAL_LEN = 8192
N_CHANNELS = 2
FRAME = 256
HOP = 128
N_CLASSES = 4
BATCH_SIZE = 32
STEPS_PER_EPOCH = 12
EPOCHS = 6
FS = 12000.0


def synth_recording(rng, label):
    t = np.arange(SIGNAL_LEN) / FS
    base = 30.0 + 5.0 * label
    x = np.zeros((N_CHANNELS, SIGNAL_LEN), dtype=np.float64)
    for c in range(N_CHANNELS):
        x[c] = np.sin(2 * np.pi * base * t * (c + 1)) + 0.5 * rng.standard_normal(SIGNAL_LEN)
        if label > 0:
            impulses = (np.sin(2 * np.pi * (90 + 40 * label) * t) > 0.995).astype(np.float64)
            x[c] += 3.0 * np.convolve(impulses, np.exp(-np.arange(64) / 8.0), mode="same")
    return x


def recording_features(x):
    window = np.hanning(FRAME)
    feats = []
    for c in range(N_CHANNELS):
        ch = x[c] - x[c].mean()
        frames = np.lib.stride_tricks.sliding_window_view(ch, FRAME)[::HOP]
        spec = np.abs(np.fft.rfft(frames * window, axis=1))
        logspec = np.log1p(spec)
        env = np.abs(sps.hilbert(ch))
        env_frames = np.lib.stride_tricks.sliding_window_view(env, FRAME)[::HOP]
        env_spec = np.log1p(np.abs(np.fft.rfft(env_frames * window, axis=1)))[:, :64]
        rms = np.sqrt((frames**2).mean(axis=1, keepdims=True))
        centered = frames - frames.mean(axis=1, keepdims=True)
        kurt = (centered**4).mean(axis=1, keepdims=True) / (
            (centered**2).mean(axis=1, keepdims=True) ** 2 + 1e-8
        )
        crest = np.abs(frames).max(axis=1, keepdims=True) / (rms + 1e-8)
        b, a = sps.butter(4, [2000 / (FS / 2), 5000 / (FS / 2)], btype="band")
        band = sps.filtfilt(b, a, ch)
        band_frames = np.lib.stride_tricks.sliding_window_view(band, FRAME)[::HOP]
        band_rms = np.sqrt((band_frames**2).mean(axis=1, keepdims=True))
        feats.append(np.concatenate([logspec, env_spec, rms, kurt, crest, band_rms], axis=1))
    return np.concatenate(feats, axis=1).astype(np.float32)


N_FRAMES = (SIGNAL_LEN - FRAME) // HOP + 1
FEAT_DIM = N_CHANNELS * (FRAME // 2 + 1 + 64 + 4)


def recording_generator(seed):
    def gen():
        rng = np.random.default_rng(seed)
        for _ in range(STEPS_PER_EPOCH * BATCH_SIZE):
            label = int(rng.integers(N_CLASSES))
            yield recording_features(synth_recording(rng, label)), label

    return gen


def make_dataset(seed=0):
    ds = tf.data.Dataset.from_generator(
        recording_generator(seed),
        output_signature=(
            tf.TensorSpec((N_FRAMES, FEAT_DIM), tf.float32),
            tf.TensorSpec((), tf.int32),
        ),
    )
    return ds.batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)


def build_model():
    inp = keras.Input((N_FRAMES, FEAT_DIM))
    x = keras.layers.LayerNormalization()(inp)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(256, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES)(x)
    return keras.Model(inp, out)


def train(dataset_fn, label):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_epoch(dataset):
        total = tf.constant(0.0)
        n = tf.constant(0.0)
        for x, y in dataset:
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            acc.update_state(y, logits)
            total += loss
            n += 1.0
        return total / n

    epoch_times = []
    for epoch in range(EPOCHS):
        acc.reset_state()
        t0 = time.perf_counter()
        mean_loss = float(train_epoch(dataset_fn(epoch)))
        epoch_times.append(time.perf_counter() - t0)
        print(
            f"[{label}] epoch {epoch + 1}/{EPOCHS} loss={mean_loss:.4f} "
            f"acc={float(acc.result()):.3f} time={epoch_times[-1]:.2f}s"
        )
    return float(np.mean(epoch_times[1:])) / STEPS_PER_EPOCH


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    full = train(make_dataset, "generator")
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full={full * 1000:.1f} ms/step"
    if args.truth:
        x, y = next(iter(make_dataset(123)))
        cached = lambda epoch: tf.data.Dataset.from_tensors((x, y)).repeat(STEPS_PER_EPOCH)  # noqa: E731
        compute = train(cached, "cached")
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
    print(f"bearing_vibration: {summary} steps/s={1.0 / full:.2f}")


if __name__ == "__main__":
    main()
