# Fine-tunes on a small labelled set but validates on a large held-out set after every epoch
# (validation_data): validation takes most of the run. A callback times the two apart.
import time

import keras
import numpy as np
from truth import report

rng = np.random.default_rng(0)
x_train, x_val = (
    rng.random((512, 128), dtype=np.float32),
    rng.random((80000, 128), dtype=np.float32),
)
y_train, y_val = x_train[:, :4].sum(axis=1) > 2, x_val[:, :4].sum(axis=1) > 2


class Timing(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.validation_seconds = 0.0

    def on_test_begin(self, logs=None):
        self._started = time.perf_counter()

    def on_test_end(self, logs=None):
        self.validation_seconds += time.perf_counter() - self._started


model = keras.Sequential(
    [
        keras.Input((128,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile("adam", "binary_crossentropy", metrics=["accuracy", keras.metrics.AUC()])
timing = Timing()
start = time.perf_counter()
model.fit(
    x_train,
    y_train,
    batch_size=32,
    epochs=3,
    validation_data=(x_val, y_val),
    validation_batch_size=64,
    callbacks=[timing],
    verbose=0,
)
fit_seconds = time.perf_counter() - start
report(
    fit_seconds=fit_seconds,
    validation_seconds=timing.validation_seconds,
    training_seconds=fit_seconds - timing.validation_seconds,
    validation_share_of_fit=timing.validation_seconds / fit_seconds,
)
