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
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

SEQ_LEN = 128
VOCAB = 25
NUM_FAMILIES = 40
NUM_SEQS = 32 * 50
D_MODEL = 128
HEADS = 4
LAYERS = 3
BATCH = args.batch_size

rng = np.random.default_rng(13)
tokens = rng.integers(1, VOCAB, (NUM_SEQS, SEQ_LEN)).astype(np.int32)
lengths = rng.integers(60, SEQ_LEN + 1, NUM_SEQS)
tokens[np.arange(SEQ_LEN)[None, :] >= lengths[:, None]] = 0
families = rng.integers(0, NUM_FAMILIES, NUM_SEQS).astype(np.int32)


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, vocab, length, dim, **kwargs):
        super().__init__(**kwargs)
        self.tok = keras.layers.Embedding(vocab, dim)
        self.pos = keras.layers.Embedding(length, dim)

    def call(self, x):
        positions = tf.range(tf.shape(x)[1])
        return self.tok(x) + self.pos(positions)[None]


def encoder_block(x):
    attn = keras.layers.MultiHeadAttention(num_heads=HEADS, key_dim=D_MODEL // HEADS)(x, x)
    x = keras.layers.LayerNormalization()(x + attn)
    ff = keras.layers.Dense(4 * D_MODEL, activation="gelu")(x)
    ff = keras.layers.Dense(D_MODEL)(ff)
    return keras.layers.LayerNormalization()(x + ff)


def build_model():
    inp = keras.Input((SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding(VOCAB, SEQ_LEN, D_MODEL)(inp)
    for _ in range(LAYERS):
        x = encoder_block(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(NUM_FAMILIES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


keras.utils.set_random_seed(0)
model = build_model()
timer = StepTimer()
model.fit(
    tokens,
    families,
    batch_size=BATCH,
    epochs=args.epochs,
    shuffle=True,
    callbacks=[timer],
    verbose=0,
)
full = timer.seconds_per_step()
steps = len(timer.durations)
append_out({"steps_per_second": 1.0 / full})
msg = f"protein: {steps} steps, {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
if args.truth:
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    cached = tf.data.Dataset.from_tensors((tokens[:BATCH], families[:BATCH])).repeat()
    model.fit(cached, steps_per_epoch=steps, epochs=1, callbacks=[timer], verbose=0)
    compute = timer.seconds_per_step()
    frac = min(1.0, max(0.0, (full - compute) / full))
    append_out({"truth_input_fraction": frac})
    msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
print(msg)
