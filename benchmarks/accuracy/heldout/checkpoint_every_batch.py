# Saves the whole model (architecture, weights, optimizer state) every batch "in case the
# job dies", from a callback that also times its own saves.
import atexit
import os
import shutil
import tempfile
import time

import keras
import numpy as np
from truth import report

folder = tempfile.mkdtemp(prefix="ckpt-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
x = rng.random((4096, 512), dtype=np.float32)
y = rng.integers(0, 20, 4096)


class SaveEvery(keras.callbacks.Callback):
    def __init__(self, every):
        super().__init__()
        self.every = every
        self.saves = 0
        self.save_seconds = 0.0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % self.every == 0:
            start = time.perf_counter()
            self.model.save(os.path.join(folder, f"latest-{self.saves % 2}.keras"))
            self.save_seconds += time.perf_counter() - start
            self.saves += 1


model = keras.Sequential(
    [
        keras.Input((512,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(20),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
saver = SaveEvery(1)
start = time.perf_counter()
model.fit(x, y, batch_size=64, epochs=2, callbacks=[saver], verbose=0)
fit_seconds = time.perf_counter() - start
report(
    fit_seconds=fit_seconds,
    save_seconds=saver.save_seconds,
    saves=saver.saves,
    save_share_of_fit=saver.save_seconds / fit_seconds,
)
