# Trains a scoring model for a few seconds, then scores the whole catalogue with
# model.predict: the batch prediction is most of the run. Both are timed here.
import time

import keras
import numpy as np
from truth import report

rng = np.random.default_rng(0)
x_train = rng.random((4096, 96), dtype=np.float32)
y_train = x_train[:, :3].mean(axis=1, keepdims=True)
catalogue = rng.random((600000, 96), dtype=np.float32)

model = keras.Sequential(
    [
        keras.Input((96,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile("adam", "mse")
start = time.perf_counter()
model.fit(x_train, y_train, batch_size=64, epochs=2, verbose=0)
trained = time.perf_counter()
scores = model.predict(catalogue, batch_size=128, verbose=0)
predicted = time.perf_counter()
print("top score", float(scores.max()))
report(
    fit_seconds=trained - start,
    predict_seconds=predicted - trained,
    predict_share=(predicted - trained) / (predicted - start),
)
