"""Train a neural collaborative-filtering recommender on synthetic user-item interactions.

Data feeding: user ids, item ids and click labels live in numpy arrays in memory and are simply
sliced per step. The step (embeddings + a wide MLP tower) runs in a ``@tf.function`` train step
with ``tf.GradientTape``. After every step the loop does ordinary bookkeeping in Python/numpy on
the step's outputs: batch AUC (rank based), hit rate, calibration, several running statistics,
and one line appended to a training log file. That bookkeeping is not input.
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

N_USERS = 20000
N_ITEMS = 8000
N_ROWS = 200_000
BATCH_SIZE = 1024
STEPS = 180
WARMUP = 5
LOG_EVERY = 20


def make_interactions(rng):
    users = rng.integers(0, N_USERS, size=N_ROWS).astype(np.int32)
    items = rng.integers(0, N_ITEMS, size=N_ROWS).astype(np.int32)
    taste = rng.normal(size=(N_USERS, 8))
    style = rng.normal(size=(N_ITEMS, 8))
    score = np.einsum("ij,ij->i", taste[users], style[items])
    clicks = (score + rng.normal(size=N_ROWS) > 1.0).astype(np.float32)
    return users, items, clicks.reshape(-1, 1)


def build_model():
    user = tf.keras.Input(shape=(), dtype="int32")
    item = tf.keras.Input(shape=(), dtype="int32")
    u = tf.keras.layers.Embedding(N_USERS, 64)(user)
    v = tf.keras.layers.Embedding(N_ITEMS, 64)(item)
    h = tf.keras.layers.Concatenate()([u, v, u * v])
    for width in (1024, 1024, 512):
        h = tf.keras.layers.Dense(width, activation="relu")(h)
    out = tf.keras.layers.Dense(1)(h)
    return tf.keras.Model([user, item], out)


def batch_auc(labels, scores):
    pos = labels > 0.5
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = np.empty(len(scores))
    ranks[np.argsort(scores)] = np.arange(1, len(scores) + 1)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def train(data, log_path, cached_batch=None):
    users, items, clicks = data
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(u, i, y):
        with tf.GradientTape() as tape:
            logits = model([u, i], training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss, logits

    per_epoch = N_ROWS // BATCH_SIZE
    stats = {"loss_ema": None, "auc_sum": 0.0, "auc_n": 0, "best_auc": 0.0}
    loss_hist, step_times = [], []
    with open(log_path, "w") as log:
        for step in range(STEPS):
            t0 = time.perf_counter()
            if cached_batch is None:
                s = (step % per_epoch) * BATCH_SIZE
                u, i, y = (
                    users[s : s + BATCH_SIZE],
                    items[s : s + BATCH_SIZE],
                    clicks[s : s + BATCH_SIZE],
                )
            else:
                u, i, y = cached_batch
            loss, logits = train_step(u, i, y)

            # bookkeeping on the step's outputs
            loss = float(loss)
            probs = 1.0 / (1.0 + np.exp(-np.clip(logits.numpy().ravel(), -30.0, 30.0)))
            labels = np.asarray(y).ravel()
            auc = batch_auc(labels, probs)
            top = np.argsort(-probs)[:50]
            hit_rate = float(labels[top].mean())
            calib = float(probs.mean() - labels.mean())
            hist, _ = np.histogram(probs, bins=20, range=(0.0, 1.0))
            ema = stats["loss_ema"]
            stats["loss_ema"] = loss if ema is None else 0.98 * ema + 0.02 * loss
            if not np.isnan(auc):
                stats["auc_sum"] += auc
                stats["auc_n"] += 1
                stats["best_auc"] = max(stats["best_auc"], auc)
            loss_hist.append(loss)
            record = {
                "step": step,
                "loss": loss,
                "auc": auc,
                "hit@50": hit_rate,
                "calib": calib,
                "hist": hist.tolist(),
            }
            log.write(json.dumps(record) + "\n")
            if (step + 1) % LOG_EVERY == 0:
                mean_auc = stats["auc_sum"] / max(stats["auc_n"], 1)
                print(
                    f"step {step + 1:4d}  loss {loss:.4f}  ema {stats['loss_ema']:.4f}  "
                    f"auc {auc:.3f}  mean_auc {mean_auc:.3f}"
                )
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
    data = make_interactions(np.random.default_rng(0))
    with tempfile.TemporaryDirectory(prefix="ncf_") as root:
        log_path = os.path.join(root, "train_log.jsonl")
        times = train(data, log_path)
        full = float(np.mean(times[WARMUP:]))
        append_result({"steps_per_second": 1.0 / full})
        summary = f"compute_recommender_metrics: {STEPS} steps, {1.0 / full:.2f} steps/s"

        if args.truth:
            cached = tuple(a[:BATCH_SIZE] for a in data)
            times = train(data, log_path, cached)
            compute = float(np.mean(times[WARMUP:]))
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_result({"truth_input_fraction": frac})
            summary += (
                f", full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, truth {frac:.3f}"
            )
    print(summary)


if __name__ == "__main__":
    main()
