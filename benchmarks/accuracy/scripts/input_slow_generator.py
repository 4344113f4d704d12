# A Python generator that reads slowly (network/disk latency) feeding model.fit.
import time

import keras
import numpy as np
from truth import measure, timed_fit


def batches():
    rng = np.random.default_rng(0)
    while True:
        time.sleep(0.012)
        x = rng.random((64, 32), dtype=np.float32)
        yield x, x.sum(axis=1, keepdims=True)


model = keras.Sequential(
    [keras.Input((32,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
model.fit(batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, batches(), 120)
measure(model, batches, 60)
