"""Card-transaction fraud scoring with a per-step diagnostics history.

A custom training loop trains a sequence model over each card's last 64
transactions. For "later error analysis" the loop appends every step's
hidden activations, logits and input batch (as tensors) to a Python list that
is never trimmed, so resident memory grows step after step.
"""
import argparse
import json
import os
import resource
import time

import numpy as np
import tensorflow as tf
import keras

SEQ = 64
N_FEAT = 16
HIDDEN = 160
BATCH = 256
STEPS = 300
N_CARDS = 20000


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_cards(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (N_CARDS, SEQ, N_FEAT)).astype(np.float32)
    y = (x[:, -5:, 0].mean(1) + 0.5 * x[:, :, 3].max(1) > 1.6).astype(np.float32)
    return x, y


class FraudScorer(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.proj = keras.layers.Dense(HIDDEN, activation="relu")
        self.conv = keras.layers.Conv1D(HIDDEN, 3, padding="causal", activation="relu")
        self.head = keras.layers.Dense(1)

    def call(self, x, training=False):
        h = self.conv(self.proj(x))
        return h, self.head(tf.reduce_max(h, axis=1))


def rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def train(get_batch):
    keras.utils.set_random_seed(1)
    model = FraudScorer()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    history = []  # kept "for error analysis after training"

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            hidden, logits = model(x, training=True)
            loss = loss_fn(y[:, None], logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, hidden, logits

    stamps = []
    for step in range(STEPS):
        x, y = get_batch(step)
        loss, hidden, logits = train_step(x, y)
        loss = float(loss)
        stamps.append(time.perf_counter())
        history.append({"step": step, "inputs": x, "hidden": hidden[:, -32:], "logits": logits,
                        "loss": loss})
        if step % 60 == 0:
            print(f"step {step}: loss {loss:.4f}, peak RSS {rss_gib():.2f} GiB")
    return float(np.mean(np.diff(stamps)[5:])), history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    x, y = make_cards()
    per_epoch = N_CARDS // BATCH
    rng = np.random.default_rng(4)
    order = rng.permutation(N_CARDS)

    def get_batch(step):
        idx = np.sort(order[(step % per_epoch) * BATCH:(step % per_epoch + 1) * BATCH])
        return tf.constant(x[idx]), tf.constant(y[idx])

    full, history = train(get_batch)
    report("steps_per_second", 1.0 / full)
    msg = f"fraud: {1.0 / full:.2f} steps/s, {len(history)} history entries, peak RSS {rss_gib():.2f} GiB"
    if args.truth:
        del history
        fixed = get_batch(0)
        compute, history = train(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
