# A wide MLP regression trained with model.fit straight on NumPy arrays held in memory.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import TRUTH, report

rng = np.random.default_rng(0)
x = rng.normal(size=(6144, 256)).astype(np.float32)
y = (np.sin(x[:, :8]).sum(axis=1, keepdims=True) + 0.1 * rng.normal(size=(6144, 1))).astype(
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
    # the same step on one batch already in memory as a tensor: the model's compute alone
    cached = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
    full, compute = [], []
    for _ in range(3):
        start = time.perf_counter()
        model.fit(x[: 6 * BATCH], y[: 6 * BATCH], batch_size=BATCH, epochs=1, verbose=0)
        full.append((time.perf_counter() - start) / 6)
        start = time.perf_counter()
        model.fit(cached, steps_per_epoch=6, epochs=1, verbose=0)
        compute.append((time.perf_counter() - start) / 6)
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
