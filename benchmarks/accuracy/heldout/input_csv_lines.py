# Tabular data in CSV files read line by line with TextLineDataset: every line is parsed
# with decode_csv and normalised in its own map call before batching.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

COLUMNS = 48
folder = tempfile.mkdtemp(prefix="csv-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
files = []
for part in range(4):
    path = os.path.join(folder, f"part-{part}.csv")
    rows = rng.normal(size=(5000, COLUMNS + 1))
    np.savetxt(
        path,
        rows,
        delimiter=",",
        fmt="%.6f",
        header=",".join([f"f{i}" for i in range(COLUMNS)] + ["target"]),
        comments="",
    )
    files.append(path)
mean = np.zeros(COLUMNS, np.float32)
scale = np.ones(COLUMNS, np.float32)


def parse(line):
    values = tf.io.decode_csv(line, [[0.0]] * (COLUMNS + 1))
    x = (tf.stack(values[:COLUMNS]) - mean) / scale
    return x, tf.reshape(values[COLUMNS], [1])


def dataset():
    lines = tf.data.Dataset.from_tensor_slices(files).interleave(
        lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=1
    )
    return lines.repeat().map(parse).batch(512)


model = keras.Sequential(
    [keras.Input((COLUMNS,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 700)
measure(model, dataset, 40)
