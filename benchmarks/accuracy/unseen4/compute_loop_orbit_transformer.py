# Learns to propagate satellite orbits: given 64 past position/velocity fixes of an object
# in low or medium Earth orbit (with J2-like precession and measurement noise), a small
# transformer encoder predicts the next 8 positions. All tracks are simulated up front and
# held in memory; a hand-written loop with a tf.function step trains the model with
# gradient clipping and a cosine learning-rate schedule.
import argparse
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, report

PAST, FUTURE, WIDTH, HEADS, BATCH, TRACKS = 64, 8, 96, 4, 32, 4096


def simulate_tracks(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(PAST + FUTURE)[None, :] * 60.0  # one fix a minute
    radius = rng.uniform(6700, 12000, (TRACKS, 1))  # km
    mean_motion = np.sqrt(398600.0 / radius**3)
    phase = rng.uniform(0, 2 * np.pi, (TRACKS, 1))
    inclination = rng.uniform(0, np.pi, (TRACKS, 1))
    node = rng.uniform(0, 2 * np.pi, (TRACKS, 1)) - 1e-6 * t * np.cos(inclination)  # precession
    angle = phase + mean_motion * t
    x_orb, y_orb = np.cos(angle), np.sin(angle)
    x = x_orb * np.cos(node) - y_orb * np.cos(inclination) * np.sin(node)
    y = x_orb * np.sin(node) + y_orb * np.cos(inclination) * np.cos(node)
    z = y_orb * np.sin(inclination)
    position = np.stack([x, y, z], -1) * (radius / 12000.0)[..., None]
    velocity = np.gradient(position, axis=1) * 10
    noisy = position + rng.normal(0, 0.002, position.shape)
    states = np.concatenate([noisy, velocity], -1).astype(np.float32)
    return states[:, :PAST], position[:, PAST:].reshape(TRACKS, -1).astype(np.float32)


def encoder_block(x):
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.MultiHeadAttention(HEADS, WIDTH // HEADS)(h, h)
    x = x + h
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.Dense(4 * WIDTH, activation="gelu")(h)
    return x + keras.layers.Dense(WIDTH)(h)


def build_model():
    inputs = keras.Input((PAST, 6))
    h = keras.layers.Dense(WIDTH)(inputs)
    h = h + keras.layers.Embedding(PAST, WIDTH)(keras.ops.arange(PAST))
    for _ in range(3):
        h = encoder_block(h)
    h = keras.layers.LayerNormalization()(h[:, -8:, :])
    h = keras.layers.Flatten()(h)
    return keras.Model(inputs, keras.layers.Dense(FUTURE * 3)(h))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    past, future = simulate_tracks()
    tracks = (
        tf.data.Dataset.from_tensor_slices((past, future))
        .cache()
        .shuffle(TRACKS, seed=2)
        .repeat()
        .batch(BATCH, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    model = build_model()
    schedule = keras.optimizers.schedules.CosineDecay(1e-3, decay_steps=2000, alpha=0.05)
    optimizer = keras.optimizers.Adam(schedule)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            prediction = model(x, training=True)
            loss = tf.reduce_mean(tf.square(prediction - y))
        grads = tape.gradient(loss, model.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=False))
        return loss

    def train(data, steps, skip=0):
        """Seconds per step over ``steps`` steps, timed from step ``skip`` on."""
        batches = iter(data)
        for step in range(steps):
            if step == skip:
                start = time.perf_counter()
            x, y = next(batches)
            loss = train_step(x, y)
        print(f"mse {float(loss):.5f}")
        return (time.perf_counter() - start) / (steps - skip)

    train(tracks, 3)
    report(steps_per_second=1 / train(tracks, args.steps))
    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(tracks))).repeat()
        full, compute = [], []
        for _ in range(3):
            full.append(train(tracks, args.steps, SKIP_STEPS))
            compute.append(train(cached, args.steps, SKIP_STEPS))
        f, c = statistics.median(full), statistics.median(compute)
        report(
            truth_full_seconds=f,
            truth_compute_seconds=c,
            truth_input_wait_fraction=max(0.0, (f - c) / f),
        )
