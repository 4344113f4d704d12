"""Causal Transformer language model over aircraft maintenance log tokens.

Tokenised maintenance-log sequences are generated once and held as one
int32 tensor; each step slices a batch with tf.gather on pre-drawn indices
(cheap).  The model is a stack of pre-norm Transformer decoder blocks
trained in a custom loop whose step is @tf.function(jit_compile=True).
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

VOCAB = 1000
SEQ = 128
D_MODEL = 128
HEADS = 4
LAYERS = 3
BATCH = 8
N_SEQS = 2048
STEPS = 150


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_logs(rng):
    # Zipf-ish token stream with recurring phrases ("INSP", "TORQUE", part numbers...)
    phrases = rng.integers(1, VOCAB, size=(300, 6))
    seqs = np.empty((N_SEQS, SEQ + 1), np.int32)
    for i in range(N_SEQS):
        toks = []
        while len(toks) < SEQ + 1:
            if rng.random() < 0.6:
                toks.extend(phrases[rng.integers(300)])
            else:
                toks.append(min(int(rng.zipf(1.3)), VOCAB - 1))
        seqs[i] = toks[:SEQ + 1]
    return seqs


class DecoderBlock(keras.layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.ln1 = keras.layers.LayerNormalization()
        self.attn = keras.layers.MultiHeadAttention(HEADS, D_MODEL // HEADS)
        self.ln2 = keras.layers.LayerNormalization()
        self.ff1 = keras.layers.Dense(4 * D_MODEL, activation="gelu")
        self.ff2 = keras.layers.Dense(D_MODEL)

    def call(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, use_causal_mask=True)
        return x + self.ff2(self.ff1(self.ln2(x)))


def build_model():
    keras.utils.set_random_seed(17)
    tokens = keras.Input((SEQ,), dtype="int32")
    x = keras.layers.Embedding(VOCAB, D_MODEL)(tokens)
    pos = keras.layers.Embedding(SEQ, D_MODEL)(keras.ops.arange(SEQ)[None, :])
    x = x + pos
    for _ in range(LAYERS):
        x = DecoderBlock()(x)
    logits = keras.layers.Dense(VOCAB)(keras.layers.LayerNormalization()(x))
    return keras.Model(tokens, logits)


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.AdamW(3e-4)
    opt.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step in range(STEPS):
        x, y = next_batch(step)
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[4:])), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    data = tf.constant(make_logs(np.random.default_rng(0)))
    order = np.random.default_rng(1).integers(N_SEQS, size=(STEPS, BATCH))

    def next_batch(step):
        seq = tf.gather(data, order[step])
        return seq[:, :-1], seq[:, 1:]

    t0 = time.perf_counter()
    full, loss = train(next_batch)
    report(steps_per_second=1.0 / full)
    msg = f"maintenance logs LM: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s, loss {loss:.3f}"
    if args.truth:
        fixed = next_batch(0)
        compute, _ = train(lambda step: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
