# Detects local earthquakes in 60 s three-component seismograms (100 Hz, raw int16 counts
# as a digitiser writes them). The station archive is held in memory; a tf.data map of
# plain TensorFlow ops turns each record into network input: demean, cosine taper, a
# 1-10 Hz band-pass done in the frequency domain, the envelope from the analytic signal,
# an STA/LTA characteristic function and a random 20 s window. The map runs serially and
# the batches are not prefetched.
import argparse
import math

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

RATE, SECONDS, WINDOW, BATCH, RECORDS = 100, 60, 2048, 32, 1200
SAMPLES = RATE * SECONDS
STA, LTA = 50, 500


def make_archive(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(SAMPLES) / RATE
    noise = rng.normal(0, 1, (RECORDS, 3, SAMPLES))
    noise += 0.6 * np.sin(2 * np.pi * 0.2 * t + rng.uniform(0, 6, (RECORDS, 3, 1)))  # microseism
    labels = rng.random(RECORDS) < 0.5
    for i in np.flatnonzero(labels):
        p = rng.uniform(10, 45)
        s = p + rng.uniform(1.5, 6)
        for onset, freq, amp in ((p, rng.uniform(4, 9), 4.0), (s, rng.uniform(2, 5), 7.0)):
            after = np.clip(t - onset, 0, None)
            wave = amp * np.sin(2 * np.pi * freq * after) * np.exp(-after / 2.5) * (t > onset)
            noise[i] += wave * rng.uniform(0.3, 1.0, (3, 1))
    return (noise * 300).astype(np.int16), labels.astype(np.float32)


def band_pass(x):
    spectrum = tf.signal.rfft(x)
    freqs = tf.linspace(0.0, RATE / 2, SAMPLES // 2 + 1)
    gain = tf.sigmoid((freqs - 1.0) * 4) * tf.sigmoid((10.0 - freqs) * 2)
    return tf.signal.irfft(spectrum * tf.cast(gain, tf.complex64))


def envelope(x):
    spectrum = tf.signal.fft(tf.cast(x, tf.complex64))
    n = SAMPLES
    h = tf.concat([[1.0], tf.fill([n // 2 - 1], 2.0), [1.0], tf.zeros([n // 2 - 1])], 0)
    analytic = tf.signal.ifft(spectrum * tf.cast(h, tf.complex64))
    return tf.abs(analytic)


def sta_lta(energy):
    csum = tf.concat([tf.zeros([3, 1]), tf.cumsum(energy, axis=1)], 1)
    sta = (csum[:, STA:] - csum[:, :-STA]) / STA
    lta = (csum[:, LTA:] - csum[:, :-LTA]) / LTA
    sta = sta[:, LTA - STA :]
    ratio = sta / (lta + 1e-3)
    return tf.pad(ratio, [[0, 0], [LTA - 1, 0]])


def to_input(raw, label):
    x = tf.cast(raw, tf.float32)
    x = x - tf.reduce_mean(x, axis=1, keepdims=True)
    taper = 0.5 - 0.5 * tf.cos(2 * math.pi * tf.range(200, dtype=tf.float32) / 400)
    taper = tf.concat([taper, tf.ones([SAMPLES - 400]), tf.reverse(taper, [0])], 0)
    x = band_pass(x * taper)
    env = envelope(x)
    ratio = sta_lta(x * x)
    x = x / (tf.reduce_max(tf.abs(x)) + 1e-6)
    env = env / (tf.reduce_max(env) + 1e-6)
    features = tf.concat([x, env, tf.math.log1p(ratio)], 0)  # 9 x SAMPLES
    start = tf.random.uniform([], 0, SAMPLES - WINDOW, dtype=tf.int32)
    window = tf.transpose(features[:, start : start + WINDOW])
    return window, label


def seismograms(waveforms, labels):
    return (
        tf.data.Dataset.from_tensor_slices((waveforms, labels))
        .shuffle(RECORDS)
        .repeat()
        .map(to_input)
        .batch(BATCH)
    )


def build_model():
    inputs = keras.Input((WINDOW, 9))
    h = inputs
    for filters in (16, 32, 48, 64, 96):
        h = keras.layers.Conv1D(filters, 7, padding="same", activation="relu")(h)
        h = keras.layers.MaxPooling1D(4 if filters < 64 else 2)(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(64, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(h))
    model.compile(keras.optimizers.Adam(1e-3), "binary_crossentropy", metrics=["accuracy"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    waveforms, labels = make_archive()
    model = build_model()
    timed_fit(model, seismograms(waveforms, labels), 200)
    measure(model, lambda: seismograms(waveforms, labels), 200)
