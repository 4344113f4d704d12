"""Molecular solubility regression with a small graph convolution network."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

MAX_ATOMS = 48
ATOM_FEATS = 32
BATCH_SIZE = 64
STEPS_PER_EPOCH = 100
EPOCHS = 4

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
def random_molecule(rng):
    n = int(rng.integers(12, MAX_ATOMS + 1))
    atom_types = rng.integers(0, ATOM_FEATS, size=n)
    bonds = []
    for i in range(1, n):
        bonds.append((i, int(rng.integers(0, i))))
    for _ in range(n // 4):
        a, b = rng.integers(0, n, size=2)
        if a != b:
            bonds.append((int(a), int(b)))
    return n, atom_types, bonds


def featurise(n, atom_types, bonds):
    adj = np.zeros((MAX_ATOMS, MAX_ATOMS), np.float32)
    for a, b in bonds:
        adj[a, b] = 1.0
        adj[b, a] = 1.0
    adj[:n, :n] += np.eye(n, dtype=np.float32)
    degree = np.diag(adj.sum(axis=1))
    inv_sqrt = np.zeros_like(degree)
    nz = np.diag(degree) > 0
    inv_sqrt[nz, nz] = 1.0 / np.sqrt(np.diag(degree)[nz])
    a_hat = inv_sqrt @ adj @ inv_sqrt
    x = np.zeros((MAX_ATOMS, ATOM_FEATS), np.float32)
    x[np.arange(n), atom_types] = 1.0
    # pre-propagated neighbourhood descriptors (1-3 hops)
    h1 = a_hat @ x
    h2 = a_hat @ h1
    h3 = a_hat @ h2
    laplacian = degree - adj
    eigvals = np.linalg.eigvalsh(laplacian[:n, :n])
    spectrum = np.zeros(MAX_ATOMS, np.float32)
    spectrum[:n] = eigvals
    # random-walk return probabilities as a structural encoding
    walk = adj / np.maximum(adj.sum(axis=1, keepdims=True), 1.0)
    p = np.eye(MAX_ATOMS, dtype=np.float32)
    rw = []
    for _ in range(16):
        p = p @ walk
        rw.append(np.diag(p))
    spectrum = spectrum + np.stack(rw, axis=1).sum(axis=1)
    feats = np.concatenate([x, h1, h2, h3], axis=1)
    target = float(h3.sum() / n + 0.1 * eigvals[-1] - 0.02 * len(bonds))
    return feats, a_hat, spectrum, target


def molecule_batches(seed=0):
    rng = np.random.default_rng(seed)
    while True:
        feats, adjs, specs, ys = [], [], [], []
        for _ in range(BATCH_SIZE):
            f, a, s, y = featurise(*random_molecule(rng))
            feats.append(f)
            adjs.append(a)
            specs.append(s)
            ys.append(y)
        yield (np.stack(feats), np.stack(adjs), np.stack(specs)), np.asarray(ys, np.float32)


# ---------------- model ----------------
class GraphConv(keras.layers.Layer):
    def __init__(self, units, **kw):
        super().__init__(**kw)
        self.dense = keras.layers.Dense(units, activation="relu")

    def call(self, inputs):
        h, a = inputs
        return self.dense(keras.ops.matmul(a, h))


def build_model():
    feats = keras.Input((MAX_ATOMS, 4 * ATOM_FEATS))
    adj = keras.Input((MAX_ATOMS, MAX_ATOMS))
    spec = keras.Input((MAX_ATOMS,))
    h = feats
    for units in (128, 128):
        h = GraphConv(units)([h, adj])
    g = keras.layers.GlobalAveragePooling1D()(h)
    s = keras.layers.Dense(64, activation="relu")(spec)
    z = keras.layers.Concatenate()([g, s])
    z = keras.layers.Dense(256, activation="relu")(z)
    out = keras.layers.Dense(1)(z)
    model = keras.Model([feats, adj, spec], out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self):
        return (self.times[-1] - self.times[5]) / (len(self.times) - 6)


def train(data, tag):
    model = build_model()
    timer = StepTimer()
    print(f"[{tag}] training")
    model.fit(data, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


full = train(molecule_batches(), "molecules")
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    batch = next(molecule_batches(seed=1))
    cached = tf.data.Dataset.from_tensors(batch).repeat()
    compute = train(cached, "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
