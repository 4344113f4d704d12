"""Activity recognition from a mix of wearable devices.

Three device fleets (wrist accelerometer, chest-strap ECG, phone gyroscope)
each get their own tf.data source with its own map: resampling, filtering and
an STFT log-spectrogram computed per recording.  The sources are interleaved
with tf.data.Dataset.sample_from_datasets and batched for model.fit.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_PER_SOURCE = 512
FRAMES = 64
BINS = 65
BATCH = 48
STEPS = 200
EPOCHS = 2
CLASSES = 6


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def synth(rng, n, channels, length, rate):
    labels = rng.integers(0, CLASSES, size=n).astype(np.int32)
    t = np.arange(length) / rate
    x = rng.normal(0, 0.5, size=(n, length, channels)).astype(np.float32)
    x += np.sin(2 * np.pi * (1 + labels[:, None, None]) * t[None, :, None]).astype(np.float32)
    return x, labels


def spectrogram(sig, frame_length, frame_step):
    spec = tf.abs(tf.signal.stft(sig, frame_length=frame_length, frame_step=frame_step, fft_length=256))
    spec = tf.math.log1p(spec)
    spec = tf.image.resize(spec[..., None], (FRAMES, BINS))[..., 0]
    return (spec - tf.reduce_mean(spec)) / (tf.math.reduce_std(spec) + 1e-6)


def wrist_map(x, y):          # 3-axis accel at 50 Hz -> magnitude
    mag = tf.norm(x, axis=-1)
    mag = mag - tf.reduce_mean(mag)
    return spectrogram(mag, 128, 32), y


def chest_map(x, y):          # ECG at 250 Hz -> moving-average detrend, downsample
    sig = x[:, 0]
    kernel = tf.ones((25, 1, 1)) / 25.0
    trend = tf.nn.conv1d(sig[None, :, None], kernel, stride=1, padding="SAME")[0, :, 0]
    sig = (sig - trend)[::2]
    return spectrogram(sig, 128, 48), y


def phone_map(x, y):          # gyro at 100 Hz -> per-axis spectrogram averaged
    specs = [spectrogram(x[:, i], 128, 40) for i in range(3)]
    return tf.add_n(specs) / 3.0, y


def make_dataset(seed):
    rng = np.random.default_rng(seed)
    wx, wy = synth(rng, N_PER_SOURCE, 3, 8192, 50.0)
    cx, cy = synth(rng, N_PER_SOURCE, 1, 24000, 250.0)
    px, py = synth(rng, N_PER_SOURCE, 3, 10400, 100.0)
    wrist = tf.data.Dataset.from_tensor_slices((wx, wy)).shuffle(N_PER_SOURCE).repeat().map(wrist_map)
    chest = tf.data.Dataset.from_tensor_slices((cx, cy)).shuffle(N_PER_SOURCE).repeat().map(chest_map)
    phone = tf.data.Dataset.from_tensor_slices((px, py)).shuffle(N_PER_SOURCE).repeat().map(phone_map)
    mixed = tf.data.Dataset.sample_from_datasets([wrist, chest, phone], weights=[0.45, 0.25, 0.30], seed=seed)
    return mixed.batch(BATCH)


def build_model():
    inp = keras.Input((FRAMES, BINS))
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D()(x)
    x = keras.layers.Conv1D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(96, activation="relu")(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.gaps), time.perf_counter() - t0, hist.history["loss"][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    full, wall, loss = train(make_dataset(4))
    emit({"steps_per_second": 1.0 / full})
    msg = f"wearables: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {loss:.4f}"
    if args.truth:
        one = next(iter(make_dataset(8)))
        compute, _, _ = train(tf.data.Dataset.from_tensors(one).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
    print(msg)


if __name__ == "__main__":
    main()
