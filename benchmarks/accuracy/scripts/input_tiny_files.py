# Thousands of tiny .npy files, one per example, read with np.load in the pipeline.
import os
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

folder = tempfile.mkdtemp(prefix="tiny-files-")
for i in range(3000):
    np.save(os.path.join(folder, f"{i:05d}.npy"), np.full(32, i % 7, np.float32))


def load(path):
    x = np.load(path.numpy().decode())
    return x, x[:1]


def dataset():
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.npy"), shuffle=False).repeat()
    ds = files.map(lambda p: tf.py_function(load, [p], (tf.float32, tf.float32)))
    return ds.map(lambda x, y: (tf.ensure_shape(x, [32]), tf.ensure_shape(y, [1]))).batch(64)


model = keras.Sequential(
    [keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 40)
measure(model, dataset, 30)
