# Classifies stained cell-microscopy tiles (mitotic / interphase / apoptotic / artefact).
# The 160x160 RGB scans are loaded into memory as uint8; the tf.data pipeline shuffles
# them, repeats, and augments each tile (random 112x112 crop, flips, stain jitter,
# per-channel normalisation to float32). The augmented tiles are cached so the augmentation
# "only has to run once" -- but the cache sits after repeat(), so it never completes and
# keeps every augmented tile it has produced.
import keras
import numpy as np
import tensorflow as tf

SCANS, SCAN_SIDE, TILE, BATCH, CLASSES = 400, 160, 112, 32, 4


def load_scans(seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SCAN_SIDE, 0:SCAN_SIDE]
    scans = np.empty((SCANS, SCAN_SIDE, SCAN_SIDE, 3), np.uint8)
    labels = rng.integers(0, CLASSES, SCANS)
    for i, label in enumerate(labels):
        background = rng.normal(225, 8, (SCAN_SIDE, SCAN_SIDE, 1)) * [1.0, 0.9, 0.95]
        image = background
        for _ in range(int(rng.integers(6, 14))):
            cy, cx = rng.uniform(20, SCAN_SIDE - 20, 2)
            size = rng.uniform(5, 12) * (0.6 if label == 2 else 1.0)
            nucleus = np.exp(-(((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * size**2)))
            if label == 0:  # condensed chromosomes: a dark bar
                nucleus *= np.abs(yy - cy) < 3
            stain = np.array([120, 60, 170]) if label != 3 else np.array([60, 140, 60])
            image = image - nucleus[..., None] * (225 - stain)
        scans[i] = np.clip(image, 0, 255).astype(np.uint8)
    return scans, labels.astype(np.int32)


def augment(scan, label):
    tile = tf.image.random_crop(scan, (TILE, TILE, 3))
    tile = tf.image.random_flip_left_right(tf.image.random_flip_up_down(tile))
    tile = tf.cast(tile, tf.float32) / 255.0
    tile = tf.image.random_hue(tf.image.random_saturation(tile, 0.8, 1.2), 0.04)
    tile = tf.image.random_brightness(tile, 0.1)
    mean, var = tf.nn.moments(tile, axes=[0, 1])
    return (tile - mean) / tf.sqrt(var + 1e-4), label


scans, labels = load_scans()
tiles = (
    tf.data.Dataset.from_tensor_slices((scans, labels))
    .shuffle(SCANS)
    .repeat()
    .map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    .cache()
    .batch(BATCH)
    .prefetch(2)
)

model = keras.Sequential(
    [
        keras.Input((TILE, TILE, 3)),
        keras.layers.Conv2D(32, 5, strides=4, activation="relu"),
        keras.layers.Conv2D(64, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(96, 3, activation="relu"),
        keras.layers.GlobalMaxPooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(CLASSES, activation="softmax"),
    ]
)
model.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(tiles, steps_per_epoch=95, epochs=3, verbose=2)
