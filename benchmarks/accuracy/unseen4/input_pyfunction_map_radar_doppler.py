# Classifies what a 77 GHz automotive radar sees in front of it (empty road, pedestrian,
# cyclist, car, several targets) from range-Doppler maps. The raw FMCW frames (64 chirps x
# 128 samples, complex) are simulated per example; a tf.py_function in a serial tf.data map
# runs the NumPy processing: windowing, range FFT, Doppler FFT, log magnitude and a 2-D
# cell-averaging CFAR detection mask. model.fit trains a small conv net on the result.
import argparse

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

CHIRPS, SAMPLES, CLASSES, BATCH = 64, 128, 5, 32
RANGE_BINS = SAMPLES // 2
# (number of targets, radial speed range in Doppler bins, micro-Doppler spread) per class
SCENES = [(0, (0, 0), 0), (1, (1, 4), 3), (1, (4, 9), 2), (1, (6, 20), 0), (3, (0, 20), 1)]
WINDOW = np.outer(np.hanning(CHIRPS), np.hanning(SAMPLES))


def simulate_frame(rng, label):
    count, (slow, fast), spread = SCENES[label]
    n = np.arange(SAMPLES)[None, :]
    m = np.arange(CHIRPS)[:, None]
    frame = (
        rng.standard_normal((CHIRPS, SAMPLES)) + 1j * rng.standard_normal((CHIRPS, SAMPLES))
    ) * 0.5
    frame += 0.8 * np.exp(2j * np.pi * 0.02 * n)  # clutter: a static return near the radar
    for _ in range(count):
        distance = rng.uniform(0.1, 0.45)
        speed = rng.uniform(slow, fast + 1e-3) / CHIRPS * rng.choice([-1, 1])
        amplitude = rng.uniform(0.6, 2.0)
        for k in range(1 + 2 * spread):  # arms and legs (or wheels) moving at other speeds
            wobble = speed + rng.normal(0, spread / CHIRPS / 2) if k else speed
            frame += amplitude / (1 + k) * np.exp(2j * np.pi * (distance * n + wobble * m))
    return frame


def cfar(power, guard=2, train=6, scale=3.0):
    size = 2 * (guard + train) + 1
    inner = 2 * guard + 1
    padded = np.pad(power, guard + train, mode="wrap")
    table = padded.cumsum(0).cumsum(1)
    table = np.pad(table, ((1, 0), (1, 0)))

    def box(k):
        off = (size - k) // 2
        h, w = power.shape
        a = table[off + k : off + k + h, off + k : off + k + w]
        b = table[off : off + h, off + k : off + k + w]
        c = table[off + k : off + k + h, off : off + w]
        d = table[off : off + h, off : off + w]
        return a - b - c + d

    noise = (box(size) - box(inner)) / (size * size - inner * inner)
    return (power > scale * noise).astype(np.float32)


def range_doppler(seed):
    rng = np.random.default_rng(int(seed))
    label = int(rng.integers(CLASSES))
    frame = simulate_frame(rng, label) * WINDOW
    spectrum = np.fft.fft(frame, axis=1)[:, :RANGE_BINS]
    spectrum = np.fft.fftshift(np.fft.fft(spectrum, axis=0), axes=0)
    power = np.abs(spectrum) ** 2
    log_power = 10 * np.log10(power + 1e-9)
    log_power = (log_power - log_power.mean()) / (log_power.std() + 1e-6)
    detections = cfar(power)
    return np.stack([log_power, detections], -1).astype(np.float32), np.int32(label)


def load(seed):
    image, label = tf.py_function(range_doppler, [seed], (tf.float32, tf.int32))
    image.set_shape((CHIRPS, RANGE_BINS, 2))
    label.set_shape(())
    return image, label


def frames(start=0):
    return tf.data.Dataset.range(start, start + 10**7).map(load).batch(BATCH)


def build_model():
    model = keras.Sequential(
        [
            keras.Input((CHIRPS, RANGE_BINS, 2)),
            keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(96, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(128, 3, padding="same", activation="relu"),
            keras.layers.GlobalMaxPooling2D(),
            keras.layers.Dense(CLASSES),
        ]
    )
    model.compile(
        keras.optimizers.Adam(1e-3),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    model = build_model()
    model.fit(frames(10**8), steps_per_epoch=3, verbose=0)
    timed_fit(model, frames(), 200)
    measure(model, frames, 200)
