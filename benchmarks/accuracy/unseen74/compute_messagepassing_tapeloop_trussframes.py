"""Truss-frame stiffness regressor: dense message passing over member adjacency matrices,
trained by a custom tf.function GradientTape loop on tensors already on the device (compute-bound)."""
import time
WALL0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    use = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(use))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

NODES = 48
FEAT = 8
WIDTH = 128
BATCH = 48
STEPS = 25
EPOCHS = 3
N_TRUSS = 512


def make_trusses(n, seed=61):
    rng = np.random.default_rng(seed)
    adj = np.zeros((n, NODES, NODES), np.float32)
    feats = rng.normal(0, 1, (n, NODES, FEAT)).astype(np.float32)
    target = np.zeros((n, 1), np.float32)
    for k in range(n):
        for i in range(NODES - 1):  # chord members plus random diagonals
            adj[k, i, i + 1] = adj[k, i + 1, i] = 1
            j = int(rng.integers(0, NODES))
            adj[k, i, j] = adj[k, j, i] = 1
        deg = adj[k].sum(1, keepdims=True)
        adj[k] /= np.maximum(deg, 1)
        target[k] = feats[k, :, 0].mean() + 0.1 * deg.mean()
    return adj, feats, target


class TrussGNN(keras.Model):
    def __init__(self):
        super().__init__()
        self.inp = keras.layers.Dense(WIDTH, activation="relu")
        self.msgs = [keras.layers.Dense(WIDTH, activation="relu") for _ in range(4)]
        self.upd = [keras.layers.Dense(WIDTH, activation="relu") for _ in range(4)]
        self.head = keras.layers.Dense(1)

    def call(self, inputs):
        a, h = inputs
        h = self.inp(h)
        for m, u in zip(self.msgs, self.upd):
            h = h + u(tf.concat([h, tf.matmul(a, m(h))], -1))
        return self.head(tf.reduce_mean(h, 1))


def train(batches):
    tf.random.set_seed(0)
    model = TrussGNN()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(a, h, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model((a, h)) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps = []
    for _ in range(EPOCHS):
        last = None
        for s in range(STEPS):
            a, h, y = batches(s)
            loss = float(step(a, h, y))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return sec_per_step(gaps), len(gaps), loss


def main():
    tmp = tempfile.mkdtemp(prefix="u74_compute_messagepassing_tapeloop_trussframes_")
    try:
        adj, feats, target = make_trusses(N_TRUSS)
        A, H, Y = tf.constant(adj), tf.constant(feats), tf.constant(target)
        nb = N_TRUSS // BATCH

        device_batches = [(A[i:i + BATCH], H[i:i + BATCH], Y[i:i + BATCH])
                          for i in range(0, nb * BATCH, BATCH)]

        def sliced(s):
            return device_batches[s % nb]

        full, n, loss = train(sliced)
        emit({"steps_per_second": 1.0 / full})
        print(f"[compute_messagepassing_tapeloop_trussframes] full {full*1000:.1f} ms/step ({1.0/full:.2f} steps/s) "
              f"over {n} gaps, loss {loss:.4f}, wall {time.perf_counter()-WALL0:.1f}s")
        if TRUTH:
            fixed = sliced(0)
            comp, _, _ = train(lambda s: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            print(f"[compute_messagepassing_tapeloop_trussframes] truth compute {comp*1000:.1f} ms/step, "
                  f"input fraction {frac:.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
