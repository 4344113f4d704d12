# Recognises hand gestures (swipe left/right/up/down, push, pull, rotate, wave) in short
# depth-camera clips: 12 frames of 32x32. All clips are rendered up front into NumPy arrays
# and fed through a cached, shuffled, prefetched tf.data pipeline to a small 3-D conv net
# (Conv3D blocks with batch norm) trained with model.fit.
import argparse

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

FRAMES, SIDE, CLIPS, GESTURES, BATCH = 12, 32, 2400, 8, 16


def render_clips(seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32)
    clips = np.zeros((CLIPS, FRAMES, SIDE, SIDE, 1), np.float32)
    labels = rng.integers(0, GESTURES, CLIPS)
    moves = {
        0: (-1, 0, 0),
        1: (1, 0, 0),
        2: (0, -1, 0),
        3: (0, 1, 0),
        4: (0, 0, -1),
        5: (0, 0, 1),
    }
    for i, g in enumerate(labels):
        x, y, depth = rng.uniform(10, 22, 2).tolist() + [rng.uniform(0.4, 0.7)]
        radius = rng.uniform(3, 5)
        for f in range(FRAMES):
            phase = f / (FRAMES - 1)
            if g in moves:
                dx, dy, dz = moves[g]
                cx, cy, cz = x + dx * 10 * (phase - 0.5), y + dy * 10 * (phase - 0.5), depth
                cz = depth + dz * 0.3 * (phase - 0.5)
            elif g == 6:  # rotate
                cx, cy, cz = (
                    x + 6 * np.cos(2 * np.pi * phase),
                    y + 6 * np.sin(2 * np.pi * phase),
                    depth,
                )
            else:  # wave
                cx, cy, cz = x + 5 * np.sin(4 * np.pi * phase), y, depth
            blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius**2))
            clips[i, f, :, :, 0] = cz * blob + rng.normal(0, 0.03, (SIDE, SIDE))
    return clips, labels.astype(np.int32)


def build_model():
    inputs = keras.Input((FRAMES, SIDE, SIDE, 1))
    h = inputs
    for filters, pool in ((16, (1, 2, 2)), (32, (2, 2, 2)), (64, (2, 2, 2))):
        h = keras.layers.Conv3D(filters, 3, padding="same", use_bias=False)(h)
        h = keras.layers.BatchNormalization()(h)
        h = keras.layers.Activation("relu")(h)
        h = keras.layers.MaxPooling3D(pool)(h)
    h = keras.layers.Conv3D(96, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling3D()(h)
    h = keras.layers.Dropout(0.2)(h)
    model = keras.Model(inputs, keras.layers.Dense(GESTURES)(h))
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
    clips, labels = render_clips()

    def clip_batches():
        return (
            tf.data.Dataset.from_tensor_slices((clips, labels))
            .cache()
            .shuffle(CLIPS, seed=3)
            .repeat()
            .batch(BATCH, drop_remainder=True)
            .prefetch(tf.data.AUTOTUNE)
        )

    model = build_model()
    model.fit(clip_batches(), steps_per_epoch=2, verbose=0)
    timed_fit(model, clip_batches(), 200)
    measure(model, clip_batches, 200)
