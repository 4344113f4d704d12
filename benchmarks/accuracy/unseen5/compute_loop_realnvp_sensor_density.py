# Fits a RealNVP normalising flow to the joint distribution of 24 correlated process-plant
# sensor readings, to flag unlikely operating states later. Eight affine coupling layers
# (alternating masks, scale and shift from small MLPs) are trained by maximum likelihood in
# a hand-written loop: a tf.function step with GradientTape, gradient clipping and Adam.
# The readings are simulated up front and fed from a cached, shuffled, prefetched dataset.
import argparse
import math
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, report

DIM, COUPLINGS, HIDDEN, ROWS, BATCH = 24, 8, 384, 60000, 512


def simulate_plant(seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(ROWS, 6))
    mixing = rng.normal(size=(6, DIM))
    x = latent @ mixing + 0.3 * np.sin(latent[:, :1] * 2) * rng.normal(size=(1, DIM))
    x += 0.1 * rng.standard_t(4, size=(ROWS, DIM))
    x = (x - x.mean(0)) / x.std(0)
    return x.astype(np.float32)


class Coupling(keras.layers.Layer):
    def __init__(self, mask, **kwargs):
        super().__init__(**kwargs)
        self.mask = tf.constant(mask, tf.float32)
        self.net = keras.Sequential(
            [
                keras.layers.Dense(HIDDEN, activation="relu"),
                keras.layers.Dense(HIDDEN, activation="relu"),
                keras.layers.Dense(2 * DIM, kernel_initializer="zeros"),
            ]
        )

    def call(self, x):
        kept = x * self.mask
        scale, shift = tf.split(self.net(kept), 2, axis=-1)
        scale = tf.tanh(scale) * (1 - self.mask)
        shift = shift * (1 - self.mask)
        y = kept + (1 - self.mask) * (x * tf.exp(scale) + shift)
        return y, tf.reduce_sum(scale, axis=-1)


class RealNVP(keras.Model):
    def __init__(self):
        super().__init__()
        masks = [(np.arange(DIM) + i) % 2 for i in range(COUPLINGS)]
        self.couplings = [Coupling(m) for m in masks]

    def call(self, x):
        log_det = tf.zeros(tf.shape(x)[0])
        for layer in self.couplings:
            x, ld = layer(x)
            log_det += ld
        return x, log_det


flow = RealNVP()
optimizer = keras.optimizers.Adam(5e-4)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        z, log_det = flow(x, training=True)
        log_prob = -0.5 * tf.reduce_sum(z * z, axis=-1) - 0.5 * DIM * math.log(2 * math.pi)
        nll = -tf.reduce_mean(log_prob + log_det)
    grads = tape.gradient(nll, flow.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 5.0)
    optimizer.apply_gradients(zip(grads, flow.trainable_variables, strict=True))
    return nll


def train(data, steps, skip=0):
    """Trains ``steps`` steps; returns seconds per step from step ``skip`` on."""
    it = iter(data)
    for step in range(steps):
        if step == skip:
            start = time.perf_counter()
        nll = train_step(next(it))
    print(f"nll per reading {float(nll) / DIM:.3f}")
    return (time.perf_counter() - start) / (steps - skip)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--steps", type=int, default=250)
    args = parser.parse_args()
    readings = simulate_plant()

    def plant_batches():
        return (
            tf.data.Dataset.from_tensor_slices(readings)
            .cache()
            .shuffle(ROWS, seed=5)
            .repeat()
            .batch(BATCH, drop_remainder=True)
            .prefetch(tf.data.AUTOTUNE)
        )

    train(plant_batches(), 3)
    report(steps_per_second=1 / train(plant_batches(), args.steps))
    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(plant_batches()))).repeat()
        full, compute = [], []
        for _ in range(3):
            full.append(train(plant_batches(), args.steps, SKIP_STEPS))
            compute.append(train(cached, args.steps, SKIP_STEPS))
        f, c = statistics.median(full), statistics.median(compute)
        report(
            truth_full_seconds=f,
            truth_compute_seconds=c,
            truth_input_wait_fraction=max(0.0, (f - c) / f),
        )
