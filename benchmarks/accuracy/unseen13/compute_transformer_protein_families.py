"""Protein family classification from amino-acid sequences with a Transformer encoder."""

import argparse
import json
import os
import time

import numpy as np

import keras
import tensorflow as tf

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
VOCAB = len(AMINO_ACIDS) + 2  # pad + unknown
SEQ_LEN = 128
N_FAMILIES = 40
N_SEQUENCES = 4000
D_MODEL = 96
N_HEADS = 4
N_LAYERS = 3
BATCH_SIZE = 16
STEPS_PER_EPOCH = 40
EPOCHS = 2
SEED = 13


class StepClock(keras.callbacks.Callback):
    def __init__(self, skip=5):
        super().__init__()
        self.skip = skip
        self.offset = 0
        self.prev = None
        self.total = 0.0
        self.count = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.prev = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        done = self.offset + batch + 1
        if self.prev is not None and self.prev[0] >= self.skip:
            self.total += now - self.prev[1]
            self.count += done - self.prev[0]
        self.prev = (done, now)

    def on_epoch_end(self, epoch, logs=None):
        if self.prev is not None:
            self.offset = self.prev[0]

    def seconds_per_step(self):
        return self.total / max(self.count, 1)


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


# ---------------------------------------------------------------- data
def make_sequences(seed):
    rng = np.random.default_rng(seed)
    motifs = rng.integers(2, VOCAB, size=(N_FAMILIES, 12))
    x = np.zeros((N_SEQUENCES, SEQ_LEN), "int32")
    y = rng.integers(0, N_FAMILIES, N_SEQUENCES).astype("int32")
    for i in range(N_SEQUENCES):
        length = rng.integers(60, SEQ_LEN + 1)
        seq = rng.integers(2, VOCAB, size=length)
        for _ in range(3):
            pos = rng.integers(0, length - 12)
            seq[pos : pos + 12] = motifs[y[i]]
        x[i, :length] = seq
    return x, y


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=SEED)
    return ds.batch(BATCH_SIZE, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE)


# ---------------------------------------------------------------- model
class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tokens = keras.layers.Embedding(VOCAB, D_MODEL)
        self.positions = keras.layers.Embedding(SEQ_LEN, D_MODEL)

    def call(self, x):
        pos = keras.ops.arange(SEQ_LEN)
        return self.tokens(x) + self.positions(pos)[None]


def encoder_block(x):
    attn = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS, dropout=0.1)(x, x)
    x = keras.layers.LayerNormalization()(x + attn)
    ff = keras.layers.Dense(4 * D_MODEL, activation="gelu")(x)
    ff = keras.layers.Dense(D_MODEL)(ff)
    return keras.layers.LayerNormalization()(x + ff)


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding()(inputs)
    for _ in range(N_LAYERS):
        x = encoder_block(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    outputs = keras.layers.Dense(N_FAMILIES)(x)
    model = keras.Model(inputs, outputs, name="protein_transformer")
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def train(dataset):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    clock = StepClock()
    model.fit(dataset, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    x, y = make_sequences(SEED)
    print(f"sequences {x.shape}, families {N_FAMILIES}")

    sec = train(make_dataset(x, y))
    append_result(steps_per_second=1.0 / sec)
    summary = f"protein transformer: {sec * 1000:.1f} ms/step"

    if args.truth:
        batch = (x[:BATCH_SIZE], y[:BATCH_SIZE])
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sec - compute) / sec, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
