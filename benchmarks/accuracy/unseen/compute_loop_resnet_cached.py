# A small residual network for 48x48 texture patches, trained with a hand-written loop
# (tf.function step with GradientTape) over a cached, shuffled and prefetched dataset.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

rng = np.random.default_rng(0)
patches = rng.random((1536, 48, 48, 3), dtype=np.float32)
classes = rng.integers(0, 12, 1536).astype(np.int32)


def dataset():
    ds = tf.data.Dataset.from_tensor_slices((patches, classes)).cache()
    return ds.shuffle(1536, seed=2).repeat().batch(48, drop_remainder=True).prefetch(4)


def residual(h, filters, stride):
    shortcut = h
    h = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(h)
    h = keras.layers.ReLU()(keras.layers.BatchNormalization()(h))
    h = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(h)
    h = keras.layers.BatchNormalization()(h)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
    return keras.layers.ReLU()(h + shortcut)


inputs = keras.Input((48, 48, 3))
h = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
for filters, stride in [(32, 1), (64, 2), (64, 1), (128, 2)]:
    h = residual(h, filters, stride)
outputs = keras.layers.Dense(12)(keras.layers.GlobalAveragePooling2D()(h))
model = keras.Model(inputs, outputs)
optimizer = keras.optimizers.SGD(0.05, momentum=0.9)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


def run(data, steps, skip=0):
    """Seconds per step over ``steps`` steps, timed from step ``skip`` on."""
    iterator = iter(data)
    for step in range(steps):
        if step == skip:
            start = time.perf_counter()
        images, labels = next(iterator)
        loss = train_step(images, labels)
    float(loss)
    return (time.perf_counter() - start) / (steps - skip)


run(dataset(), 3)
report(steps_per_second=1 / run(dataset(), 90))
if TRUTH:
    one_batch = tf.data.Dataset.from_tensors(next(iter(dataset()))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(run(dataset(), 20, SKIP_STEPS))
        compute.append(run(one_batch, 20, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
