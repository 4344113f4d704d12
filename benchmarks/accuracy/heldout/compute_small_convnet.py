# A small conv net for 28x28 grey digits, trained with model.fit on NumPy arrays in memory.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import TRUTH, report

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
