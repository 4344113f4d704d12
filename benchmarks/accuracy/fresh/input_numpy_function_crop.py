# Small images kept in memory as uint8; each example is randomly cropped, flipped and
# normalised in NumPy through tf.numpy_function in a plain (serial) map, then batched.
import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

rng = np.random.default_rng(0)
images = rng.integers(0, 256, size=(1024, 72, 72, 3), dtype=np.uint8)
labels = rng.integers(0, 10, size=(1024,)).astype(np.int64)
MEAN = images.reshape(-1, 3).mean(axis=0).astype(np.float32)
STD = images.reshape(-1, 3).std(axis=0).astype(np.float32)


def augment(image, seed):
    local = np.random.default_rng(int(seed))
    top, left = local.integers(0, 9, size=2)
    crop = image[top : top + 64, left : left + 64].astype(np.float32)
    if local.random() < 0.5:
        crop = crop[:, ::-1]
    crop = (crop - MEAN) / STD
    # a little colour jitter, per channel
    crop = crop * local.uniform(0.9, 1.1, size=3).astype(np.float32)
    return np.ascontiguousarray(crop, dtype=np.float32)


def prepare(image, label, seed):
    x = tf.numpy_function(augment, [image, seed], tf.float32)
    x.set_shape((64, 64, 3))
    return x, label


def dataset():
    seeds = tf.data.Dataset.range(10**9)
    pairs = tf.data.Dataset.from_tensor_slices((images, labels)).repeat()
    return (
        tf.data.Dataset.zip((pairs, seeds))
        .map(lambda pair, seed: prepare(pair[0], pair[1], seed))
        .batch(32)
    )


model = keras.Sequential(
    [
        keras.Input((64, 64, 3)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 160)
measure(model, dataset, 25)
