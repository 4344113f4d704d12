"""Click-through prediction for a retail catalogue with a wide-and-deep model.

Large embedding tables (users, items, shops) feed a deep MLP tower; a wide
linear part sees hashed cross features.  Training uses a custom tf.function
loop; the data is pre-built in memory, shuffled once, and served as cached
pre-batched tensors by a prefetched tf.data pipeline, so the step's math dominates.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_USERS = 200_000
N_ITEMS = 100_000
N_SHOPS = 5_000
N_CROSS = 50_000
N_DENSE = 16
EMB = 64
N_ROWS = 65_536
BATCH = 1024
STEPS = 120


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_logs(rng):
    users = rng.integers(0, N_USERS, N_ROWS).astype(np.int32)
    items = rng.integers(0, N_ITEMS, N_ROWS).astype(np.int32)
    shops = (items % N_SHOPS).astype(np.int32)
    cross = ((users.astype(np.int64) * 31 + items) % N_CROSS).astype(np.int32)
    dense = rng.normal(0, 1, (N_ROWS, N_DENSE)).astype(np.float32)
    logit = 0.8 * dense[:, 0] - 0.5 * dense[:, 1] + 0.3 * ((users + items) % 7 == 0)
    clicks = (rng.random(N_ROWS) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    feats = {"user": users, "item": items, "shop": shops, "cross": cross, "numeric": dense}
    return feats, clicks[:, None]


def build_model():
    inp = {
        "user": keras.Input((), dtype="int32", name="user"),
        "item": keras.Input((), dtype="int32", name="item"),
        "shop": keras.Input((), dtype="int32", name="shop"),
        "cross": keras.Input((), dtype="int32", name="cross"),
        "numeric": keras.Input((N_DENSE,), name="numeric"),
    }
    embs = [
        keras.layers.Embedding(N_USERS, EMB)(inp["user"]),
        keras.layers.Embedding(N_ITEMS, EMB)(inp["item"]),
        keras.layers.Embedding(N_SHOPS, EMB)(inp["shop"]),
    ]
    deep = keras.layers.Concatenate()(embs + [inp["numeric"]])
    for units in (1024, 1024, 512, 256):
        deep = keras.layers.Dense(units, activation="relu")(deep)
    deep_out = keras.layers.Dense(1)(deep)
    wide_out = keras.layers.Embedding(N_CROSS, 1)(inp["cross"])
    out = keras.layers.Add()([deep_out, wide_out])
    return keras.Model(inp, out)


def train(batches):
    keras.utils.set_random_seed(0)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        x, y = next(batches)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def pipeline(feats, clicks):
    order = np.random.default_rng(0).permutation(len(clicks))
    feats = {k: v[order] for k, v in feats.items()}
    ds = tf.data.Dataset.from_tensor_slices((feats, clicks[order]))
    return iter(ds.batch(BATCH, drop_remainder=True).cache().repeat().prefetch(4))


def repeat(batch):
    while True:
        yield batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    feats, clicks = make_logs(np.random.default_rng(21))
    full, loss = train(pipeline(feats, clicks))
    report("steps_per_second", 1.0 / full)
    msg = f"retail: {full * 1000:.1f} ms/step, final loss {loss:.3f}"
    if args.truth:
        fixed = next(pipeline(feats, clicks))
        compute, _ = train(repeat(fixed))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
