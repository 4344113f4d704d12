# Counts the characters on scanned receipt lines (a step before full OCR). Each line crop is
# its own tiny grayscale PNG on disk, 4000 of them. tf.data lists the files, reads and
# decodes each one and cleans it up (deskew-like shear, binarise against the line's mean,
# random ink thickening, padding to a fixed width) in one serial map; model.fit reads the
# batches straight from it.
import argparse
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

HEIGHT, WIDTH, MAX_CHARS, BATCH = 32, 192, 24, 64


def write_lines(folder, count=4000, seed=0):
    rng = np.random.default_rng(seed)
    glyphs = rng.random((40, 20, 9)) < 0.45  # a made-up font: 40 glyphs, 20x9 pixels
    for i in range(count):
        chars = int(rng.integers(3, MAX_CHARS + 1))
        width = min(WIDTH - 8, chars * 10 + int(rng.integers(0, 20)))
        line = np.full((HEIGHT, width), 235, np.uint8)
        x = 2
        for _ in range(chars):
            if x + 9 > width:
                break
            top = int(rng.integers(4, 10))
            line[top : top + 20, x : x + 9][glyphs[rng.integers(40)]] = rng.integers(10, 80)
            x += int(rng.integers(9, 11))
        line = np.clip(line + rng.normal(0, 12, line.shape), 0, 255).astype(np.uint8)
        png = tf.io.encode_png(line[..., None])
        tf.io.write_file(os.path.join(folder, f"line_{i:05d}_n{chars:02d}.png"), png)


def load(path):
    image = tf.io.decode_png(tf.io.read_file(path), channels=1)
    image = tf.image.convert_image_dtype(image, tf.float32)
    name = tf.strings.split(path, "_n")[-1]
    chars = tf.strings.to_number(tf.strings.substr(name, 0, 2))
    # shear the line by a random slope, one column shift at a time
    slope = tf.random.uniform((), -0.03, 0.03)
    width = tf.shape(image)[1]
    shifts = tf.cast(tf.round(slope * tf.cast(tf.range(width), tf.float32)), tf.int32)
    rows = (tf.range(HEIGHT)[:, None] + shifts[None, :]) % HEIGHT
    columns = tf.broadcast_to(tf.range(width), tf.shape(rows))
    image = tf.gather_nd(image[..., 0], tf.stack([rows, columns], -1))[..., None]
    ink = tf.cast(image < tf.reduce_mean(image) - 0.15, tf.float32)
    thick = tf.nn.max_pool2d(ink[None], 3, 1, "SAME")[0]
    ink = tf.where(tf.random.uniform(()) < 0.5, thick, ink)
    ink = tf.image.pad_to_bounding_box(ink, 0, 0, HEIGHT, WIDTH)
    ink = ink + tf.random.normal(tf.shape(ink), stddev=0.05)
    return ink, chars


def lines(folder):
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.png"), shuffle=True, seed=5)
    return files.repeat().map(load).batch(BATCH)


def build_model():
    inputs = keras.Input((HEIGHT, WIDTH, 1))
    h = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inputs)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(h)
    h = keras.layers.Reshape((4 * 24, 96))(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(128, activation="relu")(h)
    model = keras.Model(inputs, keras.layers.Dense(1)(h))
    model.compile(keras.optimizers.Adam(1e-3), "huber", metrics=["mae"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    folder = tempfile.mkdtemp(prefix="receipt-lines-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    write_lines(folder)
    print(len(os.listdir(folder)), "line images in", folder)

    model = build_model()
    model.fit(lines(folder), steps_per_epoch=3, verbose=0)
    timed_fit(model, lines(folder), 200)
    measure(model, lambda: lines(folder), 200)
