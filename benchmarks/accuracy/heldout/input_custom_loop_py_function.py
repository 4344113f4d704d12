# A custom training loop (tf.function train step, `for x, y in dataset`) over sensor windows
# whose features are computed per example in Python through tf.py_function, serially.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

WINDOW = 400
signals = np.random.default_rng(0).normal(size=(5000, WINDOW)).astype(np.float32)


def features(index):
    x = signals[int(index) % len(signals)]
    rolling = np.convolve(x, np.ones(25) / 25, mode="valid")
    spectrum = np.abs(np.fft.rfft(x))[:64]
    peaks = [i for i in range(1, WINDOW - 1) if x[i] > x[i - 1] and x[i] > x[i + 1]]
    crossings = sum(1 for i in range(1, WINDOW) if (x[i - 1] < 0) != (x[i] < 0))
    stats = [x.mean(), x.std(), rolling.max(), rolling.min(), len(peaks), crossings]
    for lag in (1, 2, 5, 10, 20, 50):
        stats.append(float(np.corrcoef(x[:-lag], x[lag:])[0, 1]))
    return np.concatenate([spectrum, np.asarray(stats)]).astype(np.float32), np.float32(crossings)


def dataset():
    ds = tf.data.Dataset.range(10**7)
    ds = ds.map(lambda i: tf.py_function(features, [i], (tf.float32, tf.float32)))
    ds = ds.map(lambda x, y: (tf.ensure_shape(x, [76]), tf.reshape(y, [1])))
    return ds.batch(32)


model = keras.Sequential(
    [keras.Input((76,)), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(1)]
)
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.MeanSquaredError()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


def train(data, steps, skip=0):
    """Seconds per step over ``steps`` steps, timed from step ``skip`` on."""
    for step, (x, y) in enumerate(data):
        if step == skip:
            start = time.perf_counter()
        if step == steps:
            break
        train_step(x, y)
    return (time.perf_counter() - start) / (steps - skip)


train(dataset(), 3)
report(steps_per_second=1 / train(dataset(), 240))
if TRUTH:
    cached = tf.data.Dataset.from_tensors(next(iter(dataset()))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(train(dataset(), 30, SKIP_STEPS))
        compute.append(train(cached, 30, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
