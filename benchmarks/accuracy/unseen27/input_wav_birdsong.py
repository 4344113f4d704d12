"""Bird-call species classifier on short WAV clips (log-STFT features)."""

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

SAMPLE_RATE = 16000
CLIP_SECONDS = 2.0
N_CLIPS = 512
N_CLASSES = 8
BATCH_SIZE = 32
STEPS = 60


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def seconds_per_step(times, skip=5):
    return float(np.mean(np.diff(times)[skip:]))


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def write_clips(root, rng):
    t = np.arange(int(SAMPLE_RATE * CLIP_SECONDS)) / SAMPLE_RATE
    paths, labels = [], []
    for i in range(N_CLIPS):
        label = i % N_CLASSES
        f0 = 900 + 300 * label
        call = np.sin(2 * np.pi * (f0 + 500 * t) * t) * np.exp(-4 * ((t - 0.4) ** 2) * 10)
        noise = 0.3 * rng.standard_normal(t.size)
        pcm = np.clip((call + noise) * 9000, -32768, 32767).astype(np.int16)
        path = os.path.join(root, f"xc_{i:05d}.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SAMPLE_RATE)
            w.writeframes(pcm.tobytes())
        paths.append(path)
        labels.append(label)
    return paths, labels


def load_clip(path, label):
    audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1)
    audio = tf.squeeze(audio, axis=-1)
    spec = tf.signal.stft(audio, frame_length=1024, frame_step=64, fft_length=2048)
    logmag = tf.math.log(tf.abs(spec) + 1e-6)
    return logmag[..., tf.newaxis], label


def build_model(input_shape):
    inputs = keras.Input(shape=input_shape)
    x = keras.layers.AveragePooling2D(pool_size=(4, 8))(inputs)
    x = keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(48, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(dataset, input_shape):
    model = build_model(input_shape)
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    tmp = tempfile.mkdtemp(prefix="u27_input_wav_birdsong_")
    try:
        paths, labels = write_clips(tmp, rng)
        ds = tf.data.Dataset.from_tensor_slices((paths, labels))
        ds = ds.shuffle(len(paths), seed=0).repeat()
        ds = ds.map(load_clip)
        ds = ds.batch(BATCH_SIZE)

        sample_x, sample_y = next(iter(ds))
        input_shape = tuple(sample_x.shape[1:])
        full = train(ds, input_shape)
        append_result(steps_per_second=1.0 / full)
        msg = f"birdsong: {1.0 / full:.2f} steps/s over {STEPS} steps of {BATCH_SIZE} clips"

        if args.truth:
            cached = tf.data.Dataset.from_tensors((sample_x, sample_y)).repeat()
            compute = train(cached, input_shape)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result(truth_input_fraction=frac)
            msg += f", truth_input_fraction={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
