"""Keyword-spotting style audio classifier.

Raw 1 s waveforms are kept in memory; every example is augmented
(time shift, gain, background noise) and turned into a log-mel
spectrogram inside a tf.numpy_function map. The map is serial and the
dataset is not prefetched.
"""

import argparse
import json
import os
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

SR = 8000
N_FFT = 256
HOP = 128
N_MELS = 40
N_CLASSES = 8
BATCH = 32
STEPS_PER_EPOCH = 50
EPOCHS = 5


def make_clips(n, rng):
    t = np.arange(SR) / SR
    labels = rng.integers(0, N_CLASSES, size=n)
    clips = np.empty((n, SR), dtype=np.float32)
    for i, lab in enumerate(labels):
        f0 = 200.0 + 150.0 * lab
        env = np.exp(-((t - rng.uniform(0.3, 0.7)) ** 2) / 0.02)
        clips[i] = (np.sin(2 * np.pi * f0 * t) + 0.3 * np.sin(4 * np.pi * f0 * t)) * env
    return clips, labels.astype(np.int32)


def mel_filterbank():
    def hz_to_mel(h):
        return 2595.0 * np.log10(1.0 + h / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    mels = np.linspace(hz_to_mel(0), hz_to_mel(SR / 2), N_MELS + 2)
    bins = np.floor((N_FFT + 1) * mel_to_hz(mels) / SR).astype(int)
    fb = np.zeros((N_MELS, N_FFT // 2 + 1), dtype=np.float32)
    for m in range(1, N_MELS + 1):
        for k in range(bins[m - 1], bins[m]):
            fb[m - 1, k] = (k - bins[m - 1]) / max(1, bins[m] - bins[m - 1])
        for k in range(bins[m], bins[m + 1]):
            fb[m - 1, k] = (bins[m + 1] - k) / max(1, bins[m + 1] - bins[m])
    return fb


FB = mel_filterbank()
WINDOW = np.hanning(N_FFT).astype(np.float32)
_aug_rng = np.random.default_rng(1)


def featurize(wave):
    wave = np.asarray(wave, dtype=np.float32)
    shift = int(_aug_rng.integers(-800, 800))
    wave = np.roll(wave, shift) * _aug_rng.uniform(0.6, 1.4)
    wave = wave + 0.05 * _aug_rng.standard_normal(wave.shape[0]).astype(np.float32)
    # pre-emphasis
    wave = np.append(wave[0], wave[1:] - 0.97 * wave[:-1])
    frames = []
    for start in range(0, len(wave) - N_FFT + 1, HOP):
        frame = wave[start : start + N_FFT] * WINDOW
        spec = np.abs(np.fft.rfft(frame)) ** 2
        frames.append(np.log(FB @ spec + 1e-6))
    feats = np.stack(frames).astype(np.float32)
    feats = (feats - feats.mean()) / (feats.std() + 1e-5)
    # SpecAugment-style masks
    t0 = int(_aug_rng.integers(0, feats.shape[0] - 8))
    feats[t0 : t0 + 8] = 0.0
    f0 = int(_aug_rng.integers(0, N_MELS - 6))
    feats[:, f0 : f0 + 6] = 0.0
    return feats


def make_dataset(clips, labels, shuffle):
    ds = tf.data.Dataset.from_tensor_slices((clips, labels))
    if shuffle:
        ds = ds.shuffle(len(clips))
    n_frames = 1 + (SR - N_FFT) // HOP

    def _map(w, y):
        x = tf.numpy_function(featurize, [w], tf.float32)
        x.set_shape((n_frames, N_MELS))
        return x, y

    return ds.map(_map).batch(BATCH, drop_remainder=True).repeat()


def build_model(n_frames):
    inp = keras.Input((n_frames, N_MELS))
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(192, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


class StepClock(keras.callbacks.Callback):
    """Seconds per training step, validation excluded."""

    def __init__(self, skip=5):
        super().__init__()
        self.skip = skip
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def mean(self):
        d = self.durations[self.skip :]
        return sum(d) / len(d), len(d), sum(d)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    train_x, train_y = make_clips(1200, rng)
    val_x, val_y = make_clips(160, rng)
    train_ds = make_dataset(train_x, train_y, shuffle=True)
    val_ds = make_dataset(val_x, val_y, shuffle=False)

    n_frames = 1 + (SR - N_FFT) // HOP
    model = build_model(n_frames)
    log_dir = tempfile.mkdtemp(prefix="kws_")
    clock = StepClock()
    model.fit(
        train_ds,
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        validation_data=val_ds,
        validation_steps=2,
        callbacks=[clock, keras.callbacks.CSVLogger(os.path.join(log_dir, "log.csv"))],
        verbose=2,
    )
    full, steps, secs = clock.mean()
    sps = steps / secs
    print(f"training: {sps:.2f} steps/s")

    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": sps}) + "\n")

    if args.truth:
        xb, yb = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        clock2 = StepClock()
        model.fit(
            cached, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock2], verbose=0
        )
        compute, _, _ = clock2.mean()
        frac = min(1.0, max(0.0, (full - compute) / full))
        print(
            f"truth: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.3f}"
        )
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
