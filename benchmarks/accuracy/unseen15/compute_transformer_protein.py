"""Protein family classification with a small Transformer encoder over amino-acid sequences.

Usage: python compute_transformer_protein.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf
from keras import layers

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
N_SEQ = 4096
SEQ_LEN = 128
N_FAMILIES = 10
D_MODEL = 96
N_HEADS = 4
N_BLOCKS = 2
BATCH_SIZE = 32
STEPS = 60
SEED = 2


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def make_sequences(rng):
    vocab = len(AMINO_ACIDS) + 1
    families = rng.integers(0, N_FAMILIES, size=N_SEQ)
    motifs = rng.integers(1, vocab, size=(N_FAMILIES, 12))
    seqs = rng.integers(1, vocab, size=(N_SEQ, SEQ_LEN))
    for i, fam in enumerate(families):
        for pos in rng.integers(0, SEQ_LEN - 12, size=3):
            seqs[i, pos : pos + 12] = motifs[fam]
    return seqs.astype(np.int32), families.astype(np.int32)


class PositionalEmbedding(layers.Layer):
    def __init__(self, vocab, length, dim, **kwargs):
        super().__init__(**kwargs)
        self.tok = layers.Embedding(vocab, dim)
        self.pos = layers.Embedding(length, dim)

    def call(self, x):
        positions = tf.range(tf.shape(x)[-1])
        return self.tok(x) + self.pos(positions)


def encoder_block(x):
    attn = layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS, dropout=0.1)(x, x)
    x = layers.LayerNormalization()(x + attn)
    ff = layers.Dense(4 * D_MODEL, activation="gelu")(x)
    ff = layers.Dense(D_MODEL)(ff)
    return layers.LayerNormalization()(x + ff)


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding(len(AMINO_ACIDS) + 1, SEQ_LEN, D_MODEL)(inputs)
    for _ in range(N_BLOCKS):
        x = encoder_block(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(N_FAMILIES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="protein_encoder")
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    seqs, families = make_sequences(rng)
    ds = (
        tf.data.Dataset.from_tensor_slices((seqs, families))
        .shuffle(N_SEQ, seed=SEED)
        .repeat()
        .batch(BATCH_SIZE, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )

    full = train(ds)
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
