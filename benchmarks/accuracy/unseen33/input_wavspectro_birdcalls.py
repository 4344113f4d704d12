"""Bird-call species classification from field-recorder clips.

Clips are written as 16-bit WAV files with the standard-library wave module;
the tf.data pipeline reads them back with tf.io.read_file +
tf.audio.decode_wav and computes a log-mel spectrogram in a serial map.
"""
import argparse
import json
import os
import shutil
import tempfile
import time
import wave

import numpy as np
import tensorflow as tf
import keras

SR = 16000
CLIP_SECONDS = 3.0
N_CLIPS = 400
N_SPECIES = 6
BATCH = 16
STEPS = 150
EPOCHS = 2
N_MELS = 64


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(kv) + "\n")


def write_clips(folder, rng):
    paths, labels = [], []
    n = int(SR * CLIP_SECONDS)
    t = np.arange(n) / SR
    for i in range(N_CLIPS):
        species = int(rng.integers(N_SPECIES))
        f0 = 1500 + 600 * species
        chirp = np.sin(2 * np.pi * (f0 + 400 * np.sin(2 * np.pi * (3 + species) * t)) * t)
        env = (np.sin(2 * np.pi * rng.uniform(1, 4) * t) > 0.3).astype(float)
        sig = 0.4 * chirp * env + 0.1 * rng.normal(size=n)
        pcm = (np.clip(sig, -1, 1) * 32767).astype("<i2")
        path = os.path.join(folder, f"rec{i:04d}_sp{species}.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SR)
            w.writeframes(pcm.tobytes())
        paths.append(path)
        labels.append(species)
    return paths, np.array(labels, dtype=np.int32)


MEL = tf.signal.linear_to_mel_weight_matrix(N_MELS, 1024 // 2 + 1, SR, 200.0, 7600.0)


def load_clip(path, label):
    audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1)
    audio = tf.squeeze(audio, -1)
    stft = tf.signal.stft(audio, frame_length=1024, frame_step=64, fft_length=1024,
                          window_fn=tf.signal.hann_window)
    mel = tf.matmul(tf.abs(stft) ** 2, MEL)
    logmel = tf.math.log(mel + 1e-6)
    logmel = (logmel - tf.reduce_mean(logmel)) / (tf.math.reduce_std(logmel) + 1e-6)
    return logmel[..., None], label


def make_dataset(paths, labels):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(len(paths), seed=0)
    ds = ds.map(load_clip)
    return ds.batch(BATCH, drop_remainder=True).repeat()


def make_model(shape):
    inputs = keras.Input(shape)
    h = keras.layers.AveragePooling2D((8, 2))(inputs)
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    model = keras.Model(inputs, keras.layers.Dense(N_SPECIES)(h))
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds, shape, clock):
    keras.utils.set_random_seed(8)
    model = make_model(shape)
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return hist, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u33_input_wavspectro_birdcalls_")
    try:
        paths, labels = write_clips(tmp, np.random.default_rng(0))
        ds = make_dataset(paths, labels)
        batch = next(iter(ds))
        shape = tuple(batch[0].shape[1:])
        clock = StepClock()
        hist, wall = train(ds, shape, clock)
        full = clock.seconds_per_step()
        report(steps_per_second=1.0 / full)
        msg = f"birdcalls: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, acc {hist.history['accuracy'][-1]:.3f}"
        if args.truth:
            clock2 = StepClock()
            train(tf.data.Dataset.from_tensors(batch).repeat(), shape, clock2)
            compute = clock2.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report(truth_input_fraction=frac)
            msg += f", truth_input_fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
