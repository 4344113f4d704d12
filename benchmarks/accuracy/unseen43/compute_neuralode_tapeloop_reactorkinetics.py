"""Surrogate kinetics model for a continuous stirred-tank reactor.

Measured concentration trajectories of the reactor's species are generated in
memory as tensors; a @tf.function GradientTape loop trains a neural ODE (an
MLP vector field integrated with fixed-step RK4 across the horizon), so each
step is dominated by the unrolled integrator's math.
"""
import json
import os
import sys
import shutil
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

SPECIES = 6
HORIZON = 16
N = 2048
BATCH = 128
STEPS = 160
H = 256


def simulate(rng):
    k = rng.uniform(0.1, 0.8, (N, 3))
    c = np.zeros((N, HORIZON + 1, SPECIES), np.float32)
    c[:, 0] = rng.uniform(0.2, 1.0, (N, SPECIES))
    dt = 0.1
    for t in range(HORIZON):
        a, b, d = c[:, t, 0], c[:, t, 1], c[:, t, 2]
        r1, r2, r3 = k[:, 0] * a * b, k[:, 1] * d, k[:, 2] * a
        dc = np.stack([-r1 - r3, -r1 + r2, r1 - r2, r2, r3, -0.1 * c[:, t, 5]], 1)
        c[:, t + 1] = c[:, t] + dt * dc
    return tf.constant(c), tf.constant(k.astype(np.float32))


def build_field():
    keras.utils.set_random_seed(17)
    inp = keras.Input((SPECIES + 3,))
    x = layers.Dense(H, activation="tanh")(inp)
    x = layers.Dense(H, activation="tanh")(x)
    x = layers.Dense(H, activation="tanh")(x)
    return keras.Model(inp, layers.Dense(SPECIES)(x))


def train(batches):
    field = build_field()
    opt = keras.optimizers.Adam(1e-3)
    dt = 0.1

    def f(c, k):
        return field(tf.concat([c, k], -1))

    @tf.function
    def step(traj, k):
        with tf.GradientTape() as tape:
            c = traj[:, 0]
            loss = 0.0
            for t in range(HORIZON):
                k1 = f(c, k)
                k2 = f(c + 0.5 * dt * k1, k)
                k3 = f(c + 0.5 * dt * k2, k)
                k4 = f(c + dt * k3, k)
                c = c + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
                loss += tf.reduce_mean(tf.square(c - traj[:, t + 1]))
        grads = tape.gradient(loss, field.trainable_variables)
        opt.apply_gradients(zip(grads, field.trainable_variables))
        return loss / HORIZON

    stamps = []
    loss = 0.0
    for i in range(STEPS):
        traj, k = batches(i)
        loss = float(step(traj, k))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_compute_neuralode_tapeloop_reactorkinetics_")
    try:
        traj, k = simulate(np.random.default_rng(43))
        nb = N // BATCH
        resident = [(traj[j * BATCH:(j + 1) * BATCH], k[j * BATCH:(j + 1) * BATCH]) for j in range(nb)]

        def in_memory(i):
            return resident[i % nb]

        full, loss = train(in_memory)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as fh:
                fh.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"CSTR neural ODE: {1.0 / full:.2f} steps/s, loss {loss:.5f}"
        if truth:
            fixed = in_memory(0)
            comp, _ = train(lambda i: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as fh:
                    fh.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
