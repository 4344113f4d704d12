"""Tiny Transformer encoder for sequence classification, custom training loop.

Token sequences are generated once, then served from a cached, shuffled,
prefetched tf.data pipeline. The train step is a tf.function with
GradientTape.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

VOCAB = 2000
SEQ = 64
D_MODEL = 128
HEADS = 4
BATCH = 64
STEPS = 120


def make_data(n=6400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(3, VOCAB, size=(n, SEQ)).astype(np.int32)
    y = rng.integers(0, 2, size=n).astype(np.int32)
    # label-dependent marker tokens
    pos = rng.integers(0, SEQ, size=(n, 3))
    for i in range(n):
        x[i, pos[i]] = 1 + y[i]
    return x, y


class EncoderBlock(tf.keras.layers.Layer):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.att = tf.keras.layers.MultiHeadAttention(heads, d // heads)
        self.ff1 = tf.keras.layers.Dense(ff, activation="gelu")
        self.ff2 = tf.keras.layers.Dense(d)
        self.n1 = tf.keras.layers.LayerNormalization()
        self.n2 = tf.keras.layers.LayerNormalization()
        self.drop = tf.keras.layers.Dropout(0.1)

    def call(self, x, training=False):
        h = self.n1(x + self.drop(self.att(x, x), training=training))
        return self.n2(h + self.drop(self.ff2(self.ff1(h)), training=training))


class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.tok = tf.keras.layers.Embedding(VOCAB, D_MODEL)
        self.pos = tf.keras.layers.Embedding(SEQ, D_MODEL)
        self.blocks = [EncoderBlock(D_MODEL, HEADS, 4 * D_MODEL) for _ in range(2)]
        self.pool = tf.keras.layers.GlobalAveragePooling1D()
        self.head = tf.keras.layers.Dense(2)

    def call(self, x, training=False):
        h = self.tok(x) + self.pos(tf.range(SEQ))[None]
        for b in self.blocks:
            h = b(h, training=training)
        return self.head(self.pool(h))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    x, y = make_data()
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .cache()
        .shuffle(len(x))
        .batch(BATCH, drop_remainder=True)
        .repeat()
        .prefetch(tf.data.AUTOTUNE)
    )

    model = Classifier()
    optimizer = tf.keras.optimizers.AdamW(3e-4)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = tf.keras.metrics.Mean()

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_loss.update_state(loss)

    def loop(batches):
        stamps = [time.perf_counter()]
        it = iter(batches)
        for step in range(STEPS):
            xb, yb = next(it)
            train_step(xb, yb)
            stamps.append(time.perf_counter())
            if (step + 1) % 50 == 0:
                print(f"step {step + 1}: loss {train_loss.result():.4f}")
                train_loss.reset_state()
        deltas = np.diff(stamps)[5:]
        return deltas

    d = loop(ds)
    full = d.mean()
    sps = len(d) / d.sum()
    print(f"throughput: {sps:.2f} steps/s")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": float(sps)}) + "\n")

    if args.truth:
        cached = tf.data.Dataset.from_tensors(next(iter(ds))).repeat()
        compute = loop(cached).mean()
        frac = float(min(1.0, max(0.0, (full - compute) / full)))
        print(f"truth: input fraction {frac:.3f} ({full * 1e3:.1f} vs {compute * 1e3:.1f} ms/step)")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
