# A small DCGAN that learns to draw 32x32 glyphs. The hand-written loop alternates the
# discriminator and generator updates (two optimizers, one tf.function step) over a dataset
# that is already in memory, cached, shuffled and prefetched.
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

SIDE, NOISE, BATCH = 32, 64, 64
rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:SIDE, 0:SIDE] / SIDE - 0.5
glyphs = np.empty((8192, SIDE, SIDE, 1), np.float32)
for i in range(len(glyphs)):
    radius, width, angle = rng.uniform(0.15, 0.4), rng.uniform(0.03, 0.08), rng.uniform(0, np.pi)
    ring = np.abs(np.hypot(xx, yy) - radius) < width
    bar = np.abs(xx * np.cos(angle) + yy * np.sin(angle)) < width
    glyphs[i, ..., 0] = np.where(ring | (bar & (rng.random() < 0.5)), 1.0, -1.0)
real_images = (
    tf.data.Dataset.from_tensor_slices(glyphs)
    .cache()
    .shuffle(8192, seed=1)
    .repeat()
    .batch(BATCH, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)

generator = keras.Sequential(
    [
        keras.Input((NOISE,)),
        keras.layers.Dense(4 * 4 * 256, use_bias=False),
        keras.layers.BatchNormalization(),
        keras.layers.LeakyReLU(0.2),
        keras.layers.Reshape((4, 4, 256)),
        keras.layers.Conv2DTranspose(128, 4, strides=2, padding="same", use_bias=False),
        keras.layers.BatchNormalization(),
        keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2DTranspose(64, 4, strides=2, padding="same", use_bias=False),
        keras.layers.BatchNormalization(),
        keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2DTranspose(1, 4, strides=2, padding="same", activation="tanh"),
    ],
    name="generator",
)
discriminator = keras.Sequential(
    [
        keras.Input((SIDE, SIDE, 1)),
        keras.layers.Conv2D(64, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2D(128, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(0.2),
        keras.layers.Conv2D(256, 4, strides=2, padding="same"),
        keras.layers.LeakyReLU(0.2),
        keras.layers.Flatten(),
        keras.layers.Dense(1),
    ],
    name="discriminator",
)
g_optimizer = keras.optimizers.Adam(2e-4, beta_1=0.5)
d_optimizer = keras.optimizers.Adam(2e-4, beta_1=0.5)
bce = keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function
def train_step(real):
    noise = tf.random.normal([BATCH, NOISE])
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits) * 0.9, real_logits) + bce(
            tf.zeros_like(fake_logits), fake_logits
        )
        g_loss = bce(tf.ones_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    d_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables, strict=True))
    g_optimizer.apply_gradients(zip(g_grads, generator.trainable_variables, strict=True))
    return d_loss, g_loss


def train(images, steps, skip=0):
    iterator = iter(images)
    for step in range(steps):
        if step == skip:
            start = time.perf_counter()
        d_loss, g_loss = train_step(next(iterator))
    print(f"d_loss {float(d_loss):.3f} g_loss {float(g_loss):.3f}")
    return (time.perf_counter() - start) / (steps - skip)


train(real_images, 3)
report(steps_per_second=1 / train(real_images, 150))
if TRUTH:
    same_batch = tf.data.Dataset.from_tensors(next(iter(real_images))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(train(real_images, 30, SKIP_STEPS))
        compute.append(train(same_batch, 30, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
