# Predicts a property of small graphs (e.g. a molecule's energy) with a graph convolutional
# network written with plain Keras layers: each example is a padded graph of 48 nodes with
# a normalised adjacency matrix and 24 node features; four message-passing layers
# (A @ H @ W, residual, layer norm) and a sum readout. All graphs are built up front and
# fed through a cached, shuffled, prefetched tf.data pipeline.
import argparse

import keras
import numpy as np
import tensorflow as tf
from truth import measure, timed_fit

NODES, FEATURES, HIDDEN, BATCH, GRAPHS = 48, 24, 160, 64, 6400


def make_graphs(seed=0):
    rng = np.random.default_rng(seed)
    x = np.zeros((GRAPHS, NODES, FEATURES), np.float32)
    a = np.zeros((GRAPHS, NODES, NODES), np.float32)
    y = np.zeros(GRAPHS, np.float32)
    for g in range(GRAPHS):
        n = int(rng.integers(16, NODES + 1))
        kinds = rng.integers(0, 8, n)
        x[g, np.arange(n), kinds] = 1.0
        x[g, :n, 8:] = rng.normal(0, 0.5, (n, FEATURES - 8))
        adjacency = np.zeros((NODES, NODES), np.float32)
        for i in range(1, n):  # a random tree plus a few rings
            j = int(rng.integers(0, i))
            adjacency[i, j] = adjacency[j, i] = 1.0
        for _ in range(int(rng.integers(0, 4))):
            i, j = rng.integers(0, n, 2)
            adjacency[i, j] = adjacency[j, i] = 1.0
        adjacency[np.arange(n), np.arange(n)] = 1.0
        degree = adjacency.sum(1)
        inv = np.where(degree > 0, 1 / np.sqrt(np.maximum(degree, 1)), 0)
        a[g] = adjacency * inv[:, None] * inv[None, :]
        y[g] = 0.3 * (kinds == 2).sum() - 0.1 * (kinds == 5).sum() + 0.05 * adjacency[:n, :n].sum()
    return x, a, (y - y.mean()) / y.std()


class GraphConv(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(units)
        self.norm = keras.layers.LayerNormalization()

    def call(self, inputs):
        h, a = inputs
        messages = keras.ops.matmul(a, self.dense(h))
        return self.norm(h + keras.activations.gelu(messages))


def build_model():
    nodes = keras.Input((NODES, FEATURES), name="nodes")
    adjacency = keras.Input((NODES, NODES), name="adjacency")
    h = keras.layers.Dense(HIDDEN)(nodes)
    for _ in range(4):
        h = GraphConv(HIDDEN)([h, adjacency])
        h = h + keras.layers.Dense(HIDDEN, activation="gelu")(h)
    readout = keras.ops.sum(h, axis=1)
    out = keras.layers.Dense(1)(keras.layers.Dense(256, activation="relu")(readout))
    model = keras.Model([nodes, adjacency], out)
    model.compile(keras.optimizers.AdamW(1e-3), "mse", metrics=["mae"])
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    parser.parse_args()
    x, a, y = make_graphs()

    def graphs():
        return (
            tf.data.Dataset.from_tensor_slices(((x, a), y))
            .cache()
            .shuffle(GRAPHS, seed=1)
            .repeat()
            .batch(BATCH, drop_remainder=True)
            .prefetch(tf.data.AUTOTUNE)
        )

    model = build_model()
    model.fit(graphs(), steps_per_epoch=3, verbose=0)
    timed_fit(model, graphs(), 200)
    measure(model, graphs, 200)
