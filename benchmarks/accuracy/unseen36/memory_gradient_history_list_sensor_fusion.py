"""Autonomous-forklift sensor-fusion model with a gradient history kept for analysis.

Lidar range bins, IMU and wheel-odometry features are fused by an MLP that
predicts the obstacle class.  To study training dynamics the loop keeps
every step's gradients, converted to NumPy, in a Python list
(grad_history) that is only analysed after training -- so resident memory
grows by the size of the model's gradients at every step.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

LIDAR_BINS = 360
IMU = 96
ODOM = 56
FEATURES = LIDAR_BINS + IMU + ODOM
CLASSES = 8
BATCH = 512
STEPS = 220
N_SAMPLES = 16_384


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_scans(rng):
    y = rng.integers(CLASSES, size=N_SAMPLES)
    angle = np.linspace(0, 2 * np.pi, LIDAR_BINS, endpoint=False)
    dist = 4 + rng.normal(0, 0.3, (N_SAMPLES, LIDAR_BINS))
    centre = rng.uniform(0, 2 * np.pi, N_SAMPLES)[:, None]
    width = (0.1 + 0.05 * y)[:, None]
    dist = np.where(np.abs(np.angle(np.exp(1j * (angle - centre)))) < width, 1.0 + 0.2 * y[:, None], dist)
    imu = rng.normal(0, 1, (N_SAMPLES, IMU)) + 0.1 * y[:, None]
    odom = rng.normal(0, 1, (N_SAMPLES, ODOM))
    x = np.concatenate([dist / 4.0, imu, odom], 1).astype("float32")
    return x, y.astype("int32")


def build_model():
    keras.utils.set_random_seed(31)
    return keras.Sequential([
        keras.Input((FEATURES,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(CLASSES),
    ])


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    grad_history = []  # analysed after training
    stamps = []
    for step in range(STEPS):
        x, y = next_batch(step)
        loss, grads = train_step(x, y)
        loss = float(loss)
        stamps.append(time.perf_counter())
        grad_history.append([g.numpy() for g in grads])
    norms = np.array([[np.linalg.norm(g) for g in gs] for gs in grad_history])
    mb = sum(g.nbytes for gs in grad_history for g in gs) / 2**20
    return float(np.mean(np.diff(stamps)[4:])), loss, norms, mb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = make_scans(np.random.default_rng(0))
    order = np.random.default_rng(1).integers(len(x), size=(STEPS, BATCH))

    def next_batch(step):
        idx = order[step]
        return x[idx], y[idx]

    t0 = time.perf_counter()
    full, loss, norms, mb = train(next_batch)
    report(steps_per_second=1.0 / full)
    msg = (f"sensor fusion: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s, loss {loss:.3f}, "
           f"grad history {mb:.0f} MiB, first/last layer-0 grad norm {norms[0, 0]:.3f}/{norms[-1, 0]:.3f}")
    if args.truth:
        fixed = next_batch(0)
        compute, _, _, _ = train(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
