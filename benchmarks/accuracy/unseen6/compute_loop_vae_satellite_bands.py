"""Trains a convolutional VAE on 10-band satellite patches with a hand-written loop."""

import argparse
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, report

PATCH, BANDS, PATCHES, BATCH, LATENT = 32, 10, 6000, 16, 32


def make_patches(seed=0):
    """Land-cover mixtures: each class has its own spectrum, mixed by smooth abundance maps."""
    rng = np.random.default_rng(seed)
    spectra = rng.uniform(0.02, 0.6, (6, BANDS)).astype(np.float32)
    noise = rng.normal(0, 1, (PATCHES, 8, 8, 6)).astype(np.float32)
    abundance = tf.image.resize(noise, (PATCH, PATCH), "bicubic").numpy()
    abundance = np.exp(2 * abundance)
    abundance /= abundance.sum(-1, keepdims=True)
    patches = abundance @ spectra
    patches += 0.01 * rng.standard_normal((PATCHES, PATCH, PATCH, BANDS), np.float32)
    return patches.astype(np.float32)


def build_encoder():
    inputs = keras.Input((PATCH, PATCH, BANDS))
    h = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(inputs)
    h = keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(h)
    h = keras.layers.Conv2D(128, 3, strides=2, padding="same", activation="relu")(h)
    h = keras.layers.Conv2D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(keras.layers.Flatten()(h))
    return keras.Model(inputs, [keras.layers.Dense(LATENT)(h), keras.layers.Dense(LATENT)(h)])


def build_decoder():
    z = keras.Input((LATENT,))
    h = keras.layers.Dense(8 * 8 * 128, activation="relu")(z)
    h = keras.layers.Reshape((8, 8, 128))(h)
    h = keras.layers.Conv2D(128, 3, padding="same", activation="relu")(h)
    h = keras.layers.Conv2DTranspose(64, 3, strides=2, padding="same", activation="relu")(h)
    h = keras.layers.Conv2DTranspose(48, 3, strides=2, padding="same", activation="relu")(h)
    return keras.Model(z, keras.layers.Conv2D(BANDS, 3, padding="same")(h))


encoder, decoder = build_encoder(), build_decoder()
weights = encoder.trainable_variables + decoder.trainable_variables
optimizer = keras.optimizers.Adam(5e-4)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        mean, log_var = encoder(x, training=True)
        z = mean + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mean))
        recon = decoder(z, training=True)
        rec = tf.reduce_mean(tf.reduce_sum(tf.square(x - recon), axis=[1, 2, 3]))
        kl = -0.5 * tf.reduce_mean(
            tf.reduce_sum(1 + log_var - tf.square(mean) - tf.exp(log_var), axis=1)
        )
        loss = rec + kl
    grads = tape.gradient(loss, weights)
    optimizer.apply_gradients(zip(grads, weights, strict=True))
    return rec, kl


def patch_dataset(patches):
    return (
        tf.data.Dataset.from_tensor_slices(patches)
        .cache()
        .shuffle(4096)
        .repeat()
        .batch(BATCH, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )


def train(data, steps, skip=0):
    """Trains ``steps`` steps; returns seconds per step from step ``skip`` on."""
    batches = iter(data)
    for step in range(steps):
        if step == skip:
            start = time.perf_counter()
        rec, kl = train_step(next(batches))
    print(f"reconstruction {float(rec):.3f} kl {float(kl):.3f}")
    return (time.perf_counter() - start) / (steps - skip)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--steps", type=int, default=250)
    args = parser.parse_args()
    patches = make_patches()

    train(patch_dataset(patches), 3)
    report(steps_per_second=1 / train(patch_dataset(patches), args.steps))
    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(patch_dataset(patches)))).repeat()
        full, compute = [], []
        for _ in range(3):
            full.append(train(patch_dataset(patches), args.steps, SKIP_STEPS))
            compute.append(train(cached, args.steps, SKIP_STEPS))
        f, c = statistics.median(full), statistics.median(compute)
        report(
            truth_full_seconds=f,
            truth_compute_seconds=c,
            truth_input_wait_fraction=max(0.0, (f - c) / f),
        )
