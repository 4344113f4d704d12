# Bird-call classifier on synthetic chirps. Everything stays in TensorFlow: each example is
# synthesised, framed with tf.signal.stft, mapped to log-mel and MFCC features in one
# Dataset.map, then batched for a small model.
import math

import keras
import tensorflow as tf
from truth import measure, timed_fit

RATE, SECONDS, CLASSES = 16000, 2, 10
MEL = tf.signal.linear_to_mel_weight_matrix(64, 257, RATE, 60.0, 7600.0)


def example(index):
    seed = tf.stack([index, tf.constant(7, tf.int64)])
    label = tf.cast(index % CLASSES, tf.float32)
    t = tf.range(RATE * SECONDS, dtype=tf.float32) / RATE
    f0 = 800.0 + 250.0 * label
    sweep = f0 + 400.0 * tf.sin(2 * math.pi * (1.5 + 0.2 * label) * t)
    phase = 2 * math.pi * tf.cumsum(sweep) / RATE
    noise = tf.random.stateless_normal([RATE * SECONDS], seed, stddev=0.3)
    audio = tf.sin(phase) * tf.exp(-((t - 1.0) ** 2) * 2.0) + noise
    stft = tf.signal.stft(audio, frame_length=512, frame_step=128, fft_length=512)
    mel = tf.math.log(tf.tensordot(tf.abs(stft) ** 2, MEL, 1) + 1e-6)
    mfcc = tf.signal.mfccs_from_log_mel_spectrograms(mel)[:, :20]
    delta = mfcc[1:] - mfcc[:-1]
    features = tf.concat([mel[1:], mfcc[1:], delta], axis=-1)
    features = (features - tf.reduce_mean(features, 0)) / (tf.math.reduce_std(features, 0) + 1e-5)
    return features, tf.cast(index % CLASSES, tf.int32)


def dataset():
    return tf.data.Dataset.range(10**8).map(example).batch(32)


frames = dataset().element_spec[0].shape[1]
model = keras.Sequential(
    [
        keras.Input((frames, 64 + 40)),
        keras.layers.Conv1D(128, 5, strides=2, activation="relu"),
        keras.layers.Conv1D(128, 3, activation="relu"),
        keras.layers.GlobalMaxPooling1D(),
        keras.layers.Dense(CLASSES),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 450)
measure(model, dataset, 30)
