# Tuning set: a generator slower than the step (not reported on).
import time

import keras
import numpy as np
from truth import measure, timed_fit


def batches():
    while True:
        time.sleep(0.025)
        yield np.ones((32, 16), np.float32), np.ones((32, 1), np.float32)


model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, batches(), 80)
measure(model, batches, 40)
