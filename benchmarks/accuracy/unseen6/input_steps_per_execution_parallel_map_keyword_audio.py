"""Keyword spotting on synthetic one-second clips, with log-mel features made in tf.data."""

import argparse

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

RATE, CLIPS, BATCH, STEPS, WORDS = 16000, 3000, 64, 240, 10
FRAME, HOP, MELS = 480, 160, 40


def make_clips(seed=0):
    """Each word is a chirp of three formant-like tones with its own pitch contour."""
    rng = np.random.default_rng(seed)
    t = np.arange(RATE) / RATE
    clips = np.zeros((CLIPS, RATE), np.int16)
    labels = rng.integers(0, WORDS, CLIPS)
    for i, word in enumerate(labels):
        start, length = rng.uniform(0.05, 0.35), rng.uniform(0.4, 0.6)
        envelope = np.clip((t - start) / 0.05, 0, 1) * np.clip((start + length - t) / 0.08, 0, 1)
        pitch = 120 + 15 * word + 30 * np.sin(2 * np.pi * (0.5 + word / 7) * t)
        voice = sum(
            np.sin(2 * np.pi * np.cumsum(pitch * k) / RATE) / k for k in (1, 3, 5 + word % 3)
        )
        clips[i] = (3000 * envelope * voice + rng.normal(0, 300, RATE)).astype(np.int16)
    return clips, labels


MEL = tf.signal.linear_to_mel_weight_matrix(MELS, 257, RATE, 20.0, 7600.0)


def features(clip, label):
    wave = tf.cast(clip, tf.float32) / 32768.0
    wave = tf.roll(wave, tf.random.uniform([], -1600, 1600, tf.int32), axis=0)
    wave = wave * tf.random.uniform([], 0.5, 1.5) + tf.random.normal([RATE], stddev=0.01)
    emphasised = tf.concat([wave[:1], wave[1:] - 0.97 * wave[:-1]], axis=0)
    stft = tf.signal.stft(emphasised, FRAME, HOP, fft_length=512)
    power = tf.abs(stft) ** 2
    mel = tf.math.log(tf.matmul(power, MEL) + 1e-6)
    mfcc = tf.signal.mfccs_from_log_mel_spectrograms(mel)[:, :13]
    delta = mfcc[2:] - mfcc[:-2]
    mel = mel[1:-1] - tf.reduce_mean(mel, axis=0)
    spec = tf.concat([mel, mfcc[1:-1], delta], axis=-1)
    band = tf.random.uniform([], 0, 66, tf.int32)
    freq_mask = tf.cast(tf.abs(tf.range(66) - band) > 3, tf.float32)
    return spec * freq_mask, label


def clip_dataset(clips, labels):
    return (
        tf.data.Dataset.from_tensor_slices((clips, labels))
        .shuffle(CLIPS)
        .repeat()
        .map(features, num_parallel_calls=2)
        .batch(BATCH)
        .prefetch(1)
    )


def build_model():
    inputs = keras.Input((96, 66))
    h = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inputs)
    h = keras.layers.DepthwiseConv1D(5, padding="same")(h)
    h = keras.layers.Conv1D(128, 1, activation="relu")(h)
    h = keras.layers.MaxPooling1D(2)(h)
    h = keras.layers.Conv1D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    model = keras.Model(inputs, keras.layers.Dense(WORDS, activation="softmax")(h))
    model.compile(
        keras.optimizers.Adam(1e-3),
        "sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=4,
    )
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    clips, labels = make_clips()
    model = build_model()
    timed_fit(model, clip_dataset(clips, labels), STEPS)
    measure(model, lambda: clip_dataset(clips, labels), STEPS)
