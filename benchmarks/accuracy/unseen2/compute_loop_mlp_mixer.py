# MLP-Mixer for 32x32 satellite tiles (land-cover classes), trained with a custom loop:
# a tf.function step with GradientTape and gradient clipping, iterating a dataset built from
# arrays in memory (cached, shuffled, batched, prefetched).
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

PATCH, TOKENS, WIDTH, CLASSES = 4, 64, 96, 9
rng = np.random.default_rng(0)
tiles = rng.integers(0, 256, (3000, 32, 32, 3), dtype=np.uint8)
land_cover = (tiles[:, :8, :8, 1].mean(axis=(1, 2)) // 29).astype(np.int32) % CLASSES

train_set = (
    tf.data.Dataset.from_tensor_slices((tiles, land_cover))
    .map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
    .cache()
    .shuffle(3000, seed=4)
    .repeat()
    .batch(64, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


class MixerBlock(keras.layers.Layer):
    def __init__(self, tokens, width, **kwargs):
        super().__init__(**kwargs)
        self.norm1 = keras.layers.LayerNormalization()
        self.token_mlp = keras.Sequential(
            [keras.layers.Dense(2 * tokens, activation="gelu"), keras.layers.Dense(tokens)]
        )
        self.norm2 = keras.layers.LayerNormalization()
        self.channel_mlp = keras.Sequential(
            [keras.layers.Dense(4 * width, activation="gelu"), keras.layers.Dense(width)]
        )

    def call(self, x):
        mixed = self.token_mlp(tf.transpose(self.norm1(x), [0, 2, 1]))
        x = x + tf.transpose(mixed, [0, 2, 1])
        return x + self.channel_mlp(self.norm2(x))


inputs = keras.Input((32, 32, 3))
h = keras.layers.Conv2D(WIDTH, PATCH, strides=PATCH)(inputs)
h = keras.layers.Reshape((TOKENS, WIDTH))(h)
for _ in range(4):
    h = MixerBlock(TOKENS, WIDTH)(h)
h = keras.layers.GlobalAveragePooling1D()(keras.layers.LayerNormalization()(h))
model = keras.Model(inputs, keras.layers.Dense(CLASSES)(h))
optimizer = keras.optimizers.AdamW(1e-3, weight_decay=1e-4)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


def seconds_per_step(batches, steps, skip=0):
    losses = []
    for step, (x, y) in enumerate(batches.take(steps)):
        if step == skip:
            start = time.perf_counter()
        losses.append(train_step(x, y))
    print(f"mean loss {float(tf.reduce_mean(losses)):.4f}")
    return (time.perf_counter() - start) / (steps - skip)


seconds_per_step(train_set, 3)
report(steps_per_second=1 / seconds_per_step(train_set, 250))
if TRUTH:
    x0, y0 = next(iter(train_set))
    repeated = tf.data.Dataset.from_tensors((x0, y0)).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(seconds_per_step(train_set, 25, SKIP_STEPS))
        compute.append(seconds_per_step(repeated, 25, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
