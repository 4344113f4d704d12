"""Protein family classification with a small Transformer encoder over amino-acid tokens."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

AMINO = "ACDEFGHIKLMNPQRSTVWY"
SEQ_LEN = 128
N_FAMILIES = 40
D_MODEL = 128
N_HEADS = 4
N_LAYERS = 2
N_SEQS = 4096

rng = np.random.default_rng(1)
families = rng.integers(0, N_FAMILIES, size=N_SEQS).astype(np.int32)
motifs = rng.integers(1, len(AMINO) + 1, size=(N_FAMILIES, 12))
tokens = rng.integers(1, len(AMINO) + 1, size=(N_SEQS, SEQ_LEN)).astype(np.int32)
for i in range(N_SEQS):
    pos = rng.integers(0, SEQ_LEN - 12)
    tokens[i, pos : pos + 12] = motifs[families[i]]

train_ds = (
    tf.data.Dataset.from_tensor_slices((tokens, families))
    .shuffle(N_SEQS, seed=0)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, vocab, length, dim, **kwargs):
        super().__init__(**kwargs)
        self.tok = keras.layers.Embedding(vocab, dim)
        self.pos = keras.layers.Embedding(length, dim)

    def call(self, x):
        positions = keras.ops.arange(keras.ops.shape(x)[-1])
        return self.tok(x) + self.pos(positions)


def encoder_block(x):
    attn = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS, dropout=0.1)(x, x)
    x = keras.layers.LayerNormalization()(x + attn)
    ff = keras.layers.Dense(4 * D_MODEL, activation="gelu")(x)
    ff = keras.layers.Dense(D_MODEL)(ff)
    return keras.layers.LayerNormalization()(x + ff)


def build_model():
    inp = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding(len(AMINO) + 1, SEQ_LEN, D_MODEL)(inp)
    for _ in range(N_LAYERS):
        x = encoder_block(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(N_FAMILIES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def seconds_per_step(stamps, skip=5):
    return float(np.mean(np.diff(stamps)[skip - 1 :]))


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(ds):
    model = build_model()
    clock = StepClock()
    model.fit(ds, steps_per_epoch=args.steps, epochs=1, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.stamps)


def main():
    full = train(train_ds)
    write_result({"steps_per_second": 1.0 / full})
    msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        compute = train(cached)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg)


if __name__ == "__main__":
    main()
