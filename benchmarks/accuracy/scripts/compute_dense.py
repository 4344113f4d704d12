# NumPy arrays in memory, a wide MLP: the math is the work.
import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

x = np.random.default_rng(0).random((4096, 512), dtype=np.float32)
y = x[:, :1].copy()


def dataset():
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(256).cache().repeat().prefetch(2)


model = keras.Sequential(
    [
        keras.Input((512,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile("adam", "mse")
model.fit(dataset(), steps_per_epoch=3, verbose=0)
timed_fit(model, dataset(), 150)
measure(model, dataset, 20)
