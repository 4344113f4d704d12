# Forecasts the next hour of load for a fleet of machines: a two-layer LSTM over 72-step
# windows of 12 metrics, trained with model.fit on NumPy arrays already in memory.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report, timed_fit

WINDOW, METRICS, BATCH = 72, 12, 128
rng = np.random.default_rng(0)
t = np.arange(WINDOW + 1, dtype=np.float32)
phase = rng.uniform(0, 2 * np.pi, size=(12800, 1, METRICS)).astype(np.float32)
noise = 0.1 * rng.normal(size=(12800, WINDOW + 1, METRICS))
series = (np.sin(t[None, :, None] / 6.0 + phase) + noise).astype(np.float32)
x, y = series[:, :WINDOW], series[:, WINDOW, :1]

model = keras.Sequential(
    [
        keras.Input((WINDOW, METRICS)),
        keras.layers.LSTM(160, return_sequences=True),
        keras.layers.LSTM(160),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ]
)
model.compile(keras.optimizers.Adam(1e-3), "mse")
model.fit(x[: 3 * BATCH], y[: 3 * BATCH], batch_size=BATCH, verbose=0)
timed_fit(model, x, len(x) // BATCH, y=y, batch_size=BATCH, shuffle=True)

if TRUTH:
    # the step on arrays against the step on one batch held as a tensor, after SKIP_STEPS
    class StepClock(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.seen = 0

        def on_train_batch_begin(self, batch, logs=None):
            self.seen += 1
            if self.seen == SKIP_STEPS + 1:
                self.start = time.perf_counter()

        def on_train_end(self, logs=None):
            self.per_step = (time.perf_counter() - self.start) / (self.seen - SKIP_STEPS)

    STEPS = SKIP_STEPS + 10
    one_batch = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
    full, compute = [], []
    for _ in range(3):
        clock = StepClock()
        model.fit(
            x[: STEPS * BATCH], y[: STEPS * BATCH], batch_size=BATCH, verbose=0, callbacks=[clock]
        )
        full.append(clock.per_step)
        model.fit(one_batch, steps_per_epoch=STEPS, verbose=0, callbacks=[clock])
        compute.append(clock.per_step)
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
