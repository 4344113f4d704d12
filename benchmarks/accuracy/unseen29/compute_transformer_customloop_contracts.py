"""Contract-clause type classification with a small Transformer encoder.

Tokenised clauses (synthetic token ids) are held as one in-memory int32 tensor;
a custom ``tf.function`` training loop slices batches out of it on device and
runs a 2-layer pre-norm Transformer encoder with multi-head attention.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

VOCAB = 8000
SEQ = 64
D_MODEL = 128
HEADS = 4
FF = 512
LAYERS = 2
N_CLASSES = 12
N_CLAUSES = 8192
BATCH = 32
STEPS = 150


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def make_clauses(seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, N_CLAUSES).astype(np.int32)
    tokens = rng.integers(1, VOCAB, (N_CLAUSES, SEQ)).astype(np.int32)
    # plant class-specific key phrases
    for i, c in enumerate(labels):
        pos = rng.integers(0, SEQ - 4)
        tokens[i, pos:pos + 4] = 10 + 4 * c + np.arange(4)
    return tokens, labels


class EncoderBlock(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.ln1 = keras.layers.LayerNormalization()
        self.att = keras.layers.MultiHeadAttention(HEADS, D_MODEL // HEADS)
        self.ln2 = keras.layers.LayerNormalization()
        self.ff1 = keras.layers.Dense(FF, activation="gelu")
        self.ff2 = keras.layers.Dense(D_MODEL)

    def call(self, x, training=False):
        h = self.ln1(x)
        x = x + self.att(h, h, training=training)
        return x + self.ff2(self.ff1(self.ln2(x)))


class ClauseClassifier(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.tok = keras.layers.Embedding(VOCAB, D_MODEL)
        self.pos = keras.layers.Embedding(SEQ, D_MODEL)
        self.blocks = [EncoderBlock() for _ in range(LAYERS)]
        self.norm = keras.layers.LayerNormalization()
        self.head = keras.layers.Dense(N_CLASSES)

    def call(self, ids, training=False):
        x = self.tok(ids) + self.pos(tf.range(SEQ))[None]
        for b in self.blocks:
            x = b(x, training=training)
        return self.head(tf.reduce_mean(self.norm(x), axis=1))


def train(get_batch):
    keras.utils.set_random_seed(1)
    model = ClauseClassifier()
    opt = keras.optimizers.AdamW(3e-4)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = get_batch(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tokens, labels = make_clauses()
    tokens_t, labels_t = tf.constant(tokens), tf.constant(labels)
    perm = tf.constant(np.random.default_rng(2).permutation(N_CLAUSES), tf.int32)
    per_epoch = N_CLAUSES // BATCH

    def get_batch(step):
        idx = perm[(step % per_epoch) * BATCH:(step % per_epoch + 1) * BATCH]
        return tf.gather(tokens_t, idx), tf.gather(labels_t, idx)

    full, loss = train(get_batch)
    report("steps_per_second", 1.0 / full)
    msg = f"contracts: {1.0 / full:.2f} steps/s, last loss {loss:.4f}"
    if args.truth:
        fixed = get_batch(0)
        compute, _ = train(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
