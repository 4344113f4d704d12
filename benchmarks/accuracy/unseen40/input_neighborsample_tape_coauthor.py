"""Co-authorship graph: classify authors into research fields from bag-of-keyword
features and their collaboration neighbourhood (GraphSAGE style). Each step samples a
mini-batch of seed authors and a fixed-fanout two-hop neighbourhood in Python from
adjacency lists, gathers the feature rows in numpy, and runs a @tf.function GradientTape step.
"""
import os, sys, json, time, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 40
N_NODES = 30000
N_FEAT = 64
N_CLASSES = 8
BATCH = 256
FAN1, FAN2 = 10, 8
STEPS = 900


def append_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_graph():
    rng = np.random.default_rng(SEED)
    labels = rng.integers(0, N_CLASSES, N_NODES)
    centers = rng.normal(size=(N_CLASSES, N_FEAT))
    feats = (0.8 * centers[labels] + rng.normal(size=(N_NODES, N_FEAT))).astype(np.float32)
    by_class = [np.flatnonzero(labels == c) for c in range(N_CLASSES)]
    adj = [[] for _ in range(N_NODES)]
    deg = rng.zipf(2.2, N_NODES).clip(1, 60)
    for u in range(N_NODES):
        same = rng.random(deg[u]) < 0.7
        for s in same:
            v = int(rng.choice(by_class[labels[u]])) if s else int(rng.integers(0, N_NODES))
            if v != u:
                adj[u].append(v)
                adj[v].append(u)
    return feats, labels.astype(np.int32), adj


def sample_fanout(nodes, adj, fanout, rnd):
    out = []
    for u in nodes:
        nbrs = adj[u]
        if not nbrs:
            out.extend([u] * fanout)
        elif len(nbrs) >= fanout:
            out.extend(rnd.sample(nbrs, fanout))
        else:
            out.extend(rnd.choice(nbrs) for _ in range(fanout))
    return out


def sample_batch(feats, labels, adj, rnd):
    seeds = [rnd.randrange(N_NODES) for _ in range(BATCH)]
    hop1 = sample_fanout(seeds, adj, FAN1, rnd)
    hop2 = sample_fanout(hop1, adj, FAN2, rnd)
    x0 = feats[seeds]
    x1 = feats[hop1].reshape(BATCH, FAN1, N_FEAT)
    x2 = feats[hop2].reshape(BATCH, FAN1, FAN2, N_FEAT)
    return x0, x1, x2, labels[seeds]


class SAGE(keras.Model):
    def __init__(self):
        super().__init__()
        self.l1_self = keras.layers.Dense(256)
        self.l1_nbr = keras.layers.Dense(256)
        self.l2_self = keras.layers.Dense(256)
        self.l2_nbr = keras.layers.Dense(256)
        self.out = keras.layers.Dense(N_CLASSES)

    def call(self, x0, x1, x2):
        h1 = tf.nn.relu(self.l1_self(x1) + self.l1_nbr(tf.reduce_mean(x2, axis=2)))
        h0 = tf.nn.relu(self.l1_self(x0) + self.l1_nbr(tf.reduce_mean(x1, axis=1)))
        z = tf.nn.relu(self.l2_self(h0) + self.l2_nbr(tf.reduce_mean(h1, axis=1)))
        return self.out(z)


def run(batch_fn):
    keras.utils.set_random_seed(SEED)
    model = SAGE()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x0, x1, x2, y):
        with tf.GradientTape() as tape:
            logits = model(x0, x1, x2)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times, loss = [], float("nan")
    for _ in range(STEPS):
        x0, x1, x2, y = batch_fn()
        loss = float(step(x0, x1, x2, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)[5:]
    return float(np.mean(gaps)), loss


def main():
    truth = "--truth" in sys.argv
    feats, labels, adj = make_graph()
    rnd = random.Random(SEED)
    full, loss = run(lambda: sample_batch(feats, labels, adj, rnd))
    append_out({"steps_per_second": 1.0 / full})
    msg = f"neighbor-sampled SAGE: {full*1000:.1f} ms/step, final loss {loss:.3f}"
    if truth:
        fixed = sample_batch(feats, labels, adj, random.Random(SEED + 1))
        comp, _ = run(lambda: fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        append_out({"truth_input_fraction": frac})
        msg += f", compute-only {comp*1000:.1f} ms/step, truth input fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
