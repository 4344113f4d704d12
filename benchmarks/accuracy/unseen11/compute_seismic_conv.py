"""Train a 1-D CNN that detects P-wave arrivals in synthetic 3-component seismic windows.

Data feeding: all windows are generated in memory at start-up and fed through a cached
``tf.data`` pipeline (``from_tensor_slices`` -> ``cache`` -> ``shuffle`` -> ``batch`` ->
``prefetch``), so producing a batch is cheap. The step is real convolution math inside a
``@tf.function`` train step with ``tf.GradientTape``.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

WINDOW = 1024
CHANNELS = 3
N_WINDOWS = 2048
BATCH_SIZE = 32
STEPS = 80
WARMUP = 5
LOG_EVERY = 15


def make_windows(rng):
    t = np.arange(WINDOW, dtype=np.float32)
    x = rng.normal(0.0, 0.2, size=(N_WINDOWS, WINDOW, CHANNELS)).astype(np.float32)
    y = (rng.random(N_WINDOWS) < 0.5).astype(np.float32)
    for k in np.flatnonzero(y):
        onset = int(rng.integers(100, WINDOW - 200))
        decay = np.exp(-(t[onset:] - onset) / 80.0)
        wave = decay * np.sin(2 * np.pi * (t[onset:] - onset) / rng.uniform(8, 20))
        x[k, onset:, :] += wave[:, None] * rng.uniform(0.5, 1.5, size=CHANNELS)
    return x, y.reshape(-1, 1)


def build_model():
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(WINDOW, CHANNELS)),
            tf.keras.layers.Conv1D(64, 11, padding="same", activation="relu"),
            tf.keras.layers.Conv1D(64, 11, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling1D(4),
            tf.keras.layers.Conv1D(128, 7, padding="same", activation="relu"),
            tf.keras.layers.Conv1D(128, 7, padding="same", activation="relu"),
            tf.keras.layers.GlobalMaxPooling1D(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )


def train(dataset, cached_batch=None):
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    it = iter(dataset) if cached_batch is None else None
    losses, step_times = [], []
    for step in range(STEPS):
        t0 = time.perf_counter()
        x, y = next(it) if cached_batch is None else cached_batch
        loss = float(train_step(x, y))
        losses.append(loss)
        if (step + 1) % LOG_EVERY == 0:
            print(f"step {step + 1:4d}  loss {loss:.4f}  mean15 {np.mean(losses[-15:]):.4f}")
        step_times.append(time.perf_counter() - t0)
    return step_times


def append_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", action="store_true", help="also measure input-wait fraction")
    args = parser.parse_args()

    tf.random.set_seed(0)
    x, y = make_windows(np.random.default_rng(0))
    dataset = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .cache()
        .shuffle(N_WINDOWS, seed=1)
        .repeat()
        .batch(BATCH_SIZE, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    times = train(dataset)
    full = float(np.mean(times[WARMUP:]))
    append_result({"steps_per_second": 1.0 / full})
    summary = f"compute_seismic_conv: {STEPS} steps, {1.0 / full:.2f} steps/s"

    if args.truth:
        cached = next(iter(dataset))
        times = train(dataset, cached)
        compute = float(np.mean(times[WARMUP:]))
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        summary += f", full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, truth {frac:.3f}"
    print(summary)


if __name__ == "__main__":
    main()
