# A keras.utils.PyDataset whose __getitem__ waits on storage.
import time

import keras
import numpy as np
from truth import measure, timed_fit


class Shards(keras.utils.PyDataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        time.sleep(0.015)
        x = np.full((64, 32), i % 5, np.float32)
        return x, x[:, :1]


model = keras.Sequential(
    [keras.Input((32,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
model.fit(Shards(), steps_per_epoch=3, verbose=0)
timed_fit(model, Shards(), 100)
measure(model, Shards, 50)
