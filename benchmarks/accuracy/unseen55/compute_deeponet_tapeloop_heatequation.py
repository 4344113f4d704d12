"""Scientific ML: a DeepONet operator surrogate for the 1-D heat equation with
variable initial conditions.

Training pairs (initial condition sampled at 128 sensors, solution u(x, t) at
128 query points) are solved analytically from random Fourier modes once and
held in memory; a Python loop slices mini-batches and calls a @tf.function
GradientTape step on the branch/trunk network.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

N_FUNCS = 1024
SENSORS = 128
QUERIES = 128
MODES = 8
WIDTH = 256
LATENT = 128
BATCH = 32
EPOCHS = 8
STEPS = N_FUNCS // BATCH


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_data(rng):
    xs = np.linspace(0, 1, SENSORS)
    coef = rng.normal(0, 1, (N_FUNCS, MODES)) / np.arange(1, MODES + 1)
    k = np.pi * np.arange(1, MODES + 1)
    u0 = coef @ np.sin(np.outer(k, xs))
    q = rng.uniform(0, 1, (N_FUNCS, QUERIES, 2)) * np.array([1.0, 0.2])
    decay = np.exp(-0.5 * k[None, None] ** 2 * q[..., 1:2])
    u = (coef[:, None, :] * decay * np.sin(k[None, None] * q[..., 0:1])).sum(-1)
    return u0.astype(np.float32), q.astype(np.float32), u.astype(np.float32)


class DeepONet(keras.Model):
    def __init__(self):
        super().__init__()
        self.branch = keras.Sequential([keras.layers.Dense(WIDTH, activation="tanh") for _ in range(4)]
                                       + [keras.layers.Dense(LATENT)])
        self.trunk = keras.Sequential([keras.layers.Dense(WIDTH, activation="tanh") for _ in range(4)]
                                      + [keras.layers.Dense(LATENT)])
        self.bias = self.add_weight(shape=(), initializer="zeros", name="b0")

    def call(self, u0, q):
        b = self.branch(u0)                 # (B, P)
        t = self.trunk(q)                   # (B, Q, P)
        return tf.einsum("bp,bqp->bq", b, t) + self.bias


def train(u0, q, u, fixed=False):
    keras.utils.set_random_seed(0)
    model = DeepONet()
    model(u0[:1], q[:1])
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(a, b, c):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(a, b) - c))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    rng = np.random.default_rng(1)
    one = (u0[:BATCH].copy(), q[:BATCH].copy(), u[:BATCH].copy())  # used only for the --truth rerun
    for epoch in range(EPOCHS):
        order = rng.permutation(N_FUNCS)
        last = None
        for s in range(STEPS):
            if fixed:
                a, b, c = one
            else:
                idx = order[s * BATCH:(s + 1) * BATCH]
                a, b, c = u0[idx], q[idx], u[idx]
            loss = float(step(a, b, c))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
        print("epoch %d mse %.5f" % (epoch + 1, loss))
    return float(np.mean(gaps[5:]))


def main():
    rng = np.random.default_rng(55)
    u0, q, u = make_data(rng)
    full = train(u0, q, u)
    emit({"steps_per_second": 1.0 / full})
    msg = "full %.1f ms/step" % (full * 1e3)
    if "--truth" in sys.argv:
        comp = train(u0, q, u, fixed=True)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print("compute_deeponet_tapeloop_heatequation:", msg)


if __name__ == "__main__":
    main()
