"""Six-hour precipitation nowcasting on regional weather grids with a small U-Net."""

import argparse

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

GRID, FIELDS, SAMPLES, BATCH, STEPS = 32, 7, 1600, 8, 200


def make_grids(seed=0):
    """Advected Gaussian pressure systems; precipitation where humid air rises."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:GRID, 0:GRID] / GRID
    inputs = np.zeros((SAMPLES, GRID, GRID, 2 * FIELDS), np.float32)
    targets = np.zeros((SAMPLES, GRID, GRID, 1), np.float32)
    for i in range(SAMPLES):
        centres = rng.uniform(0, 1, (4, 2))
        depth = rng.normal(0, 1, 4)
        wind = rng.normal(0, 0.05, 2)
        frames = []
        for t in range(3):
            c = centres + wind * t
            p = sum(
                d * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 0.02)
                for d, (cx, cy) in zip(depth, c, strict=True)
            )
            u, v = np.gradient(p)
            humidity = 0.6 + 0.3 * np.sin(6 * x + t * wind[0] * 10) * np.cos(4 * y)
            temperature = 15 + 8 * y - 3 * p
            rain = np.clip(-p * humidity - 0.2, 0, None)
            frames.append(np.stack([p, u * 40, v * 40, humidity, temperature / 20, rain, x], -1))
        inputs[i] = np.concatenate(frames[:2], axis=-1)
        targets[i, ..., 0] = frames[2][..., 5]
    return inputs, targets


def grid_dataset(inputs, targets):
    return (
        tf.data.Dataset.from_tensor_slices((inputs, targets))
        .cache()
        .shuffle(SAMPLES)
        .repeat()
        .batch(BATCH)
        .prefetch(tf.data.AUTOTUNE)
    )


def block(h, width):
    h = keras.layers.Conv2D(width, 3, padding="same", activation="relu")(h)
    return keras.layers.Conv2D(width, 3, padding="same", activation="relu")(h)


def build_model():
    inputs = keras.Input((GRID, GRID, 2 * FIELDS))
    skips, h = [], inputs
    for width in (32, 64, 96):
        h = block(h, width)
        skips.append(h)
        h = keras.layers.MaxPooling2D()(h)
    h = block(h, 128)
    for width, skip in zip((96, 64, 32), reversed(skips), strict=True):
        h = keras.layers.Conv2DTranspose(width, 2, strides=2)(h)
        h = block(keras.layers.Concatenate()([h, skip]), width)
    rain = keras.layers.Conv2D(1, 1, activation="softplus")(h)
    model = keras.Model(inputs, rain)
    model.compile(keras.optimizers.Adam(1e-3), "mse", metrics=["mae"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    inputs, targets = make_grids()
    model = build_model()
    timed_fit(model, grid_dataset(inputs, targets), STEPS)
    measure(model, lambda: grid_dataset(inputs, targets), STEPS)
