# A wide MLP regression trained with model.fit straight on NumPy arrays held in memory.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

rng = np.random.default_rng(0)
x = rng.normal(size=(10240, 256)).astype(np.float32)
y = (np.sin(x[:, :8]).sum(axis=1, keepdims=True) + 0.1 * rng.normal(size=(10240, 1))).astype(
    np.float32
)
BATCH = 256
STEPS_PER_EPOCH = len(x) // BATCH

model = keras.Sequential(
    [
        keras.Input((256,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile(keras.optimizers.Adam(1e-4), "mse")
model.fit(x[:512], y[:512], batch_size=BATCH, epochs=1, verbose=0)
start = time.perf_counter()
model.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
report(steps_per_second=2 * STEPS_PER_EPOCH / (time.perf_counter() - start))

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

    STEPS = SKIP_STEPS + 8
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
