"""Protein family classification from amino-acid sequences with a small transformer."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SEQS = 1600
SEQ_LEN = 160
N_TOKENS = 25
N_FAMILIES = 20
D_MODEL = 128
N_HEADS = 4
N_LAYERS = 2
BATCH_SIZE = 32
EPOCHS = 2
LR = 3e-4


def make_sequences(seed=0):
    rng = np.random.default_rng(seed)
    motifs = rng.integers(1, N_TOKENS, size=(N_FAMILIES, 12))
    seqs = rng.integers(1, N_TOKENS, size=(N_SEQS, SEQ_LEN)).astype(np.int32)
    labels = rng.integers(0, N_FAMILIES, N_SEQS).astype(np.int32)
    for i in range(N_SEQS):
        for pos in rng.integers(0, SEQ_LEN - 12, 3):
            seqs[i, pos : pos + 12] = motifs[labels[i]]
    return seqs, labels


class EncoderBlock(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.attn = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS)
        self.ffn1 = keras.layers.Dense(4 * D_MODEL, activation="gelu")
        self.ffn2 = keras.layers.Dense(D_MODEL)
        self.norm1 = keras.layers.LayerNormalization()
        self.norm2 = keras.layers.LayerNormalization()
        self.drop = keras.layers.Dropout(0.1)

    def call(self, x, training=False):
        h = self.norm1(x)
        x = x + self.drop(self.attn(h, h, training=training), training=training)
        h = self.norm2(x)
        return x + self.drop(self.ffn2(self.ffn1(h)), training=training)


def build_model():
    inp = keras.Input((SEQ_LEN,), dtype="int32")
    x = keras.layers.Embedding(N_TOKENS, D_MODEL)(inp)
    pos = keras.layers.Embedding(SEQ_LEN, D_MODEL)(keras.ops.arange(SEQ_LEN))
    x = x + pos
    for _ in range(N_LAYERS):
        x = EncoderBlock()(x)
    x = keras.layers.LayerNormalization()(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(N_FAMILIES)(x)
    return keras.Model(inp, out)


def train(batches, steps_per_epoch, label):
    model = build_model()
    optimizer = keras.optimizers.AdamW(LR)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(y, logits)
        return loss

    times = []
    for epoch in range(EPOCHS):
        acc.reset_state()
        for step, (x, y) in enumerate(batches.take(steps_per_epoch)):
            loss = float(train_step(x, y))
            times.append(time.perf_counter())
        print(f"[{label}] epoch {epoch + 1}/{EPOCHS} loss={loss:.4f} acc={float(acc.result()):.3f}")
    return float(np.mean(np.diff(times)[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    seqs, labels = make_sequences()
    ds = (
        tf.data.Dataset.from_tensor_slices((seqs, labels))
        .cache()
        .shuffle(N_SEQS)
        .batch(BATCH_SIZE, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    steps = N_SEQS // BATCH_SIZE // 2
    full = train(ds, steps, "sequences")
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full={full * 1000:.1f} ms/step"
    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat(), steps, "cached")
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f" compute={compute * 1000:.1f} ms/step truth_input_fraction={frac:.3f}"
    print(f"protein_family: {summary} steps/s={1.0 / full:.2f}")


if __name__ == "__main__":
    main()
