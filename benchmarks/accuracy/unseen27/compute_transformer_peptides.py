"""Peptide binding-affinity classifier: small Transformer encoder over amino-acid tokens."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SEQ_LEN = 128
VOCAB = 25
EMBED = 128
HEADS = 4
FF = 256
N_BLOCKS = 3
BATCH_SIZE = 32
STEPS = 60


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, seq_len, vocab, dim, **kwargs):
        super().__init__(**kwargs)
        self.tok = keras.layers.Embedding(vocab, dim)
        self.pos = keras.layers.Embedding(seq_len, dim)

    def call(self, x):
        positions = keras.ops.arange(keras.ops.shape(x)[-1])
        return self.tok(x) + self.pos(positions)


def encoder_block(x):
    attn = keras.layers.MultiHeadAttention(num_heads=HEADS, key_dim=EMBED // HEADS)(x, x)
    x = keras.layers.LayerNormalization()(x + keras.layers.Dropout(0.1)(attn))
    ff = keras.layers.Dense(FF, activation="gelu")(x)
    ff = keras.layers.Dense(EMBED)(ff)
    return keras.layers.LayerNormalization()(x + keras.layers.Dropout(0.1)(ff))


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding(SEQ_LEN, VOCAB, EMBED)(inputs)
    for _ in range(N_BLOCKS):
        x = encoder_block(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.AdamW(3e-4), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


def make_peptides(rng, n):
    lengths = rng.integers(40, SEQ_LEN, n)
    tokens = np.zeros((n, SEQ_LEN), dtype=np.int32)
    for i, length in enumerate(lengths):
        tokens[i, :length] = rng.integers(1, 21, length)
    motif = (tokens == 7).sum(1) + (tokens == 12).sum(1)
    labels = (motif > np.median(motif)).astype(np.float32)
    return tokens, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    x_train, y_train = make_peptides(np.random.default_rng(0), BATCH_SIZE * STEPS)

    model = build_model()
    clock = StepClock()
    model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=1, callbacks=[clock], verbose=0)
    full = float(np.mean(np.diff(clock.times)[5:]))
    append_result(steps_per_second=1.0 / full)
    msg = f"peptides: {1.0 / full:.2f} steps/s over {len(clock.times)} steps of {BATCH_SIZE}"

    if args.truth:
        batch = (x_train[:BATCH_SIZE], y_train[:BATCH_SIZE])
        model = build_model()
        clock = StepClock()
        model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=1, steps_per_epoch=STEPS,
                  callbacks=[clock], verbose=0)
        compute = float(np.mean(np.diff(clock.times)[5:]))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
