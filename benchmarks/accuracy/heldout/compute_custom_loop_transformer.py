# A custom training loop (GradientTape in a tf.function) for a small Transformer encoder on
# token sequences already in memory (cached, prefetched): the attention math is the work.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

LENGTH, WIDTH, VOCAB = 64, 64, 4000
rng = np.random.default_rng(0)
tokens = rng.integers(1, VOCAB, (2048, LENGTH)).astype(np.int32)
labels = (tokens[:, :4].sum(axis=1) % 2).astype(np.float32)[:, None]


def dataset():
    ds = tf.data.Dataset.from_tensor_slices((tokens, labels))
    return ds.shuffle(2048).batch(32, drop_remainder=True).cache().repeat().prefetch(2)


inputs = keras.Input((LENGTH,), dtype="int32")
h = keras.layers.Embedding(VOCAB, WIDTH)(inputs)
for _ in range(2):
    attended = keras.layers.MultiHeadAttention(num_heads=4, key_dim=WIDTH // 4)(h, h)
    h = keras.layers.LayerNormalization()(h + attended)
    mlp = keras.layers.Dense(4 * WIDTH, activation="gelu")(h)
    h = keras.layers.LayerNormalization()(h + keras.layers.Dense(WIDTH)(mlp))
outputs = keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(h))
model = keras.Model(inputs, outputs)
optimizer = keras.optimizers.AdamW(3e-4)
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)


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
report(steps_per_second=1 / train(dataset(), 160))
if TRUTH:
    cached = tf.data.Dataset.from_tensors(next(iter(dataset()))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(train(dataset(), 25, SKIP_STEPS))
        compute.append(train(cached, 25, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
