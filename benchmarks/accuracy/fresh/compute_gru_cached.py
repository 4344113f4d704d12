# A GRU classifier over integer token sequences held in memory, fed from a cached and
# prefetched tf.data pipeline: the recurrent math is the work.
import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

rng = np.random.default_rng(0)
tokens = rng.integers(1, 5000, size=(2048, 80)).astype(np.int32)
labels = rng.integers(0, 2, size=(2048, 1)).astype(np.float32)


def dataset():
    return (
        tf.data.Dataset.from_tensor_slices((tokens, labels)).batch(64).cache().repeat().prefetch(2)
    )


model = keras.Sequential(
    [
        keras.Input((80,), dtype="int32"),
        keras.layers.Embedding(5000, 64),
        keras.layers.GRU(128),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile("adam", "binary_crossentropy")
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 60)
measure(model, dataset, 15)
