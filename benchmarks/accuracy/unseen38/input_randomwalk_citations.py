"""Paper-topic classification on a citation graph with random-walk neighbourhoods.

For each mini-batch of seed papers, NumPy/Python performs short random walks
over an adjacency list, averages the features of the visited papers and
concatenates them with the seed features (a DeepWalk/GraphSAGE-style sampler).
Batches go to model.train_on_batch in a plain Python loop.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_NODES = 20000
N_FEAT = 64
N_TOPICS = 8
BATCH = 128
WALKS = 4
WALK_LEN = 6
STEPS = 1200


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_graph(rng):
    topics = rng.integers(0, N_TOPICS, N_NODES)
    centers = rng.normal(0, 1, (N_TOPICS, N_FEAT))
    feats = (0.3 * centers[topics] + rng.normal(0, 1, (N_NODES, N_FEAT))).astype(np.float32)
    by_topic = [np.nonzero(topics == t)[0] for t in range(N_TOPICS)]
    adj = []
    for v in range(N_NODES):
        deg = int(rng.integers(2, 15))
        same = rng.choice(by_topic[topics[v]], size=int(deg * 0.7) + 1)
        other = rng.integers(0, N_NODES, deg - int(deg * 0.7))
        adj.append(np.concatenate([same, other]))
    return feats, topics.astype(np.int32), adj


def sample_batch(rng, feats, topics, adj):
    seeds = rng.integers(0, N_NODES, BATCH)
    agg = np.zeros((BATCH, N_FEAT), dtype=np.float32)
    for i, seed in enumerate(seeds):
        visited = []
        for _ in range(WALKS):
            node = seed
            for _ in range(WALK_LEN):
                nbrs = adj[node]
                node = nbrs[rng.integers(len(nbrs))]
                visited.append(node)
        agg[i] = feats[visited].mean(axis=0)
    x = np.concatenate([feats[seeds], agg], axis=1)
    return x, topics[seeds]


def build_model():
    model = keras.Sequential([
        keras.Input((2 * N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_TOPICS),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(next_batch):
    keras.utils.set_random_seed(0)
    model = build_model()
    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    feats, topics, adj = make_graph(np.random.default_rng(2))
    rng = np.random.default_rng(3)
    full, loss = train(lambda: sample_batch(rng, feats, topics, adj))
    report("steps_per_second", 1.0 / full)
    msg = f"citations: {full * 1000:.1f} ms/step, final loss {loss:.3f}"
    if args.truth:
        fixed = sample_batch(np.random.default_rng(4), feats, topics, adj)
        compute, _ = train(lambda: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
