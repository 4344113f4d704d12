# Feature vectors saved one file per example (.npy) in a folder; a Python generator opens
# each file, standardises it and adds a little noise, and fit() takes batches from it.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
from truth import measure, timed_fit

FEATURES = 2048
folder = tempfile.mkdtemp(prefix="npy-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
paths = []
for i in range(1500):
    path = os.path.join(folder, f"example-{i:05d}.npy")
    np.save(path, rng.normal(size=FEATURES).astype(np.float32))
    paths.append(path)
targets = rng.normal(size=(len(paths), 1)).astype(np.float32)


def batches(batch_size=48):
    order = np.random.default_rng(1)
    while True:
        chosen = order.choice(len(paths), size=batch_size, replace=False)
        rows = []
        for i in chosen:
            row = np.load(paths[i])
            row = (row - row.mean()) / (row.std() + 1e-6)
            rows.append(row + order.normal(scale=0.01, size=FEATURES).astype(np.float32))
        yield np.stack(rows), targets[chosen]


model = keras.Sequential(
    [
        keras.Input((FEATURES,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile("adam", "mse")
model.fit(batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, batches(), 200)
measure(model, batches, 25)
