# Tuning set: a compute-heavy MLP fed by a Python generator that keeps up with it (~1 ms of
# pure Python per batch, which holds the GIL, and a 1 ms read that releases it) behind
# Keras's prefetch. A guard against counting the generator's Python as input where the step
# is not held by it: that Python runs while the step computes, outside any gap.
import collections
import random
import time

import keras
import numpy as np
from truth import measure, timed_fit

label_stats = collections.Counter()
rows = np.random.default_rng(0).random((4096, 256), dtype=np.float32)


def batches(batch_size=128):
    order = random.Random(0)
    while True:
        picked = [order.randrange(len(rows)) for _ in range(batch_size)]
        label_stats[picked[0] % 10] += sum(i * 31 % 7 for i in range(batch_size * 150))
        time.sleep(0.001)  # a short read from disk
        x = rows[picked]
        yield x, x[:, :1]


model = keras.Sequential(
    [keras.Input((256,)), keras.layers.Dense(6144, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
model.fit(batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, batches(), 200)
measure(model, batches, 20)
