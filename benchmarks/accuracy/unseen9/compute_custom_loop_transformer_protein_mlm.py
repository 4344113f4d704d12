"""Masked-residue language model on protein sequences (synthetic), custom training loop.

Sequences are tokenised once up front; the tf.data pipeline is cache() + shuffle + batch +
prefetch, and masking is done with vectorised TF ops, so the cost is the transformer encoder
(3 blocks, d_model 192) in a tf.function train step driven by a Python loop.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

AMINO = "ACDEFGHIKLMNPQRSTVWY"
VOCAB = len(AMINO) + 2  # pad=0, mask=1
SEQ = 64
D = 192
HEADS = 8
LAYERS = 3
BATCH = 16
STEPS = 90
SKIP = 5


def synth_proteins(rng, n=4000):
    # a toy Markov chain so there is something to learn
    trans = rng.dirichlet(np.ones(20) * 0.3, size=20)
    cum = np.cumsum(trans, axis=1)
    lengths = rng.integers(SEQ // 2, SEQ + 1, size=n)
    seqs = np.zeros((n, SEQ), np.int32)
    a = rng.integers(0, 20, size=n)
    for j in range(SEQ):
        seqs[:, j] = np.where(j < lengths, a + 2, 0)
        a = np.minimum((cum[a] < rng.random(n)[:, None]).sum(axis=1), 19)
    return seqs


def mask_tokens(tokens):
    probs = tf.random.uniform(tf.shape(tokens))
    is_masked = (probs < 0.15) & (tokens > 1)
    inputs = tf.where(is_masked, tf.ones_like(tokens), tokens)
    weights = tf.cast(is_masked, tf.float32)
    return inputs, tokens, weights


def make_dataset(seqs):
    ds = tf.data.Dataset.from_tensor_slices(seqs).cache().shuffle(2048).repeat()
    return ds.batch(BATCH, drop_remainder=True).map(mask_tokens).prefetch(tf.data.AUTOTUNE)


class Block(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.att = keras.layers.MultiHeadAttention(HEADS, D // HEADS)
        self.ff1 = keras.layers.Dense(4 * D, activation="gelu")
        self.ff2 = keras.layers.Dense(D)
        self.n1 = keras.layers.LayerNormalization()
        self.n2 = keras.layers.LayerNormalization()

    def call(self, x, training=False):
        h = self.n1(x)
        x = x + self.att(h, h, training=training)
        return x + self.ff2(self.ff1(self.n2(x)))


def build_model():
    tok = keras.Input((SEQ,), dtype="int32")
    pos = keras.ops.arange(SEQ)
    h = keras.layers.Embedding(VOCAB, D)(tok) + keras.layers.Embedding(SEQ, D)(pos)
    for _ in range(LAYERS):
        h = Block()(h)
    h = keras.layers.LayerNormalization()(h)
    logits = keras.layers.Dense(VOCAB)(h)
    return keras.Model(tok, logits)


def train(model, batches, steps):
    opt = keras.optimizers.AdamW(3e-4)
    loss_obj = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)

    @tf.function
    def step_fn(inputs, targets, weights):
        with tf.GradientTape() as tape:
            logits = model(inputs, training=True)
            per_tok = loss_obj(targets, logits)
            loss = tf.reduce_sum(per_tok * weights) / tf.maximum(tf.reduce_sum(weights), 1.0)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    it = iter(batches)
    begin = None
    for i in range(steps):
        inputs, targets, weights = next(it)
        loss = float(step_fn(inputs, targets, weights))
        if i == SKIP - 1:
            begin = time.perf_counter()
        if i % 20 == 0:
            print(f"step {i} mlm loss {loss:.3f}")
    return (time.perf_counter() - begin) / (steps - SKIP)


def record(d):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(d) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    seqs = synth_proteins(np.random.default_rng(11))
    ds = make_dataset(seqs)
    full = train(build_model(), ds, STEPS)
    record({"steps_per_second": 1.0 / full})
    print(f"{1.0 / full:.2f} steps/s")

    if args.truth:
        one = next(iter(ds))
        cached = tf.data.Dataset.from_tensors(one).repeat()
        compute = train(build_model(), cached, STEPS)
        frac = float(np.clip((full - compute) / full, 0, 1))
        record({"truth_input_fraction": frac})
        print(
            f"truth input fraction {frac:.3f}: {full * 1e3:.1f} ms real vs {compute * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
