# PNG files on disk decoded and resized by tf.data with a parallel map (AUTOTUNE) and
# prefetch, as the tf.data guide recommends; the model on top is a small dense head.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

folder = tempfile.mkdtemp(prefix="png-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
files = []
for i in range(300):
    pixels = rng.integers(0, 256, size=(160, 160, 3), dtype=np.uint8)
    path = os.path.join(folder, f"img-{i:04d}.png")
    tf.io.write_file(path, tf.io.encode_png(pixels))
    files.append(path)
labels = rng.integers(0, 5, size=len(files)).astype(np.int64)


def load(path, label):
    image = tf.io.decode_png(tf.io.read_file(path), channels=3)
    image = tf.image.resize(image, (96, 96)) / 255.0
    return image, label


def dataset():
    return (
        tf.data.Dataset.from_tensor_slices((files, labels))
        .repeat()
        .map(load, num_parallel_calls=tf.data.AUTOTUNE)
        .batch(32)
        .prefetch(tf.data.AUTOTUNE)
    )


model = keras.Sequential(
    [
        keras.Input((96, 96, 3)),
        keras.layers.AveragePooling2D(4),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(5),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 160)
measure(model, dataset, 25)
