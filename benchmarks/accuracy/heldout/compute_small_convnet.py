# A small conv net for 28x28 grey digits, trained with model.fit on NumPy arrays in memory.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

rng = np.random.default_rng(0)
x = rng.random((3072, 28, 28, 1), dtype=np.float32)
y = rng.integers(0, 10, 3072)
BATCH = 128

model = keras.Sequential(
    [
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10),
    ]
)
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x[:256], y[:256], batch_size=BATCH, epochs=1, verbose=0)
start = time.perf_counter()
model.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
report(steps_per_second=2 * len(x) // BATCH / (time.perf_counter() - start))

if TRUTH:
    # the same step on one batch already in memory as a tensor: the model's compute alone;
    # steps timed in the steady state, from step SKIP_STEPS to the end of each fit
    class Clock(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.batches = 0

        def on_train_batch_begin(self, batch, logs=None):
            self.batches += 1
            if self.batches == SKIP_STEPS + 1:
                self.start = time.perf_counter()

        def on_train_end(self, logs=None):
            self.seconds_per_step = (time.perf_counter() - self.start) / (self.batches - SKIP_STEPS)

    STEPS = SKIP_STEPS + 4
    cached = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
    full, compute = [], []
    for _ in range(3):
        clock = Clock()
        model.fit(
            x[: STEPS * BATCH],
            y[: STEPS * BATCH],
            batch_size=BATCH,
            epochs=1,
            verbose=0,
            callbacks=[clock],
        )
        full.append(clock.seconds_per_step)
        model.fit(cached, steps_per_epoch=STEPS, epochs=1, verbose=0, callbacks=[clock])
        compute.append(clock.seconds_per_step)
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
