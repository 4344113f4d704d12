"""Predict protein thermostability (delta Tm) from sequence with a small transformer encoder."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--proteins", type=int, default=6000)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

AMINO = "ACDEFGHIKLMNPQRSTVWY"
MAX_LEN = 128
D_MODEL = 128


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


rng = np.random.default_rng(4)
tokens = rng.integers(1, len(AMINO) + 1, size=(args.proteins, MAX_LEN)).astype(np.int32)
delta_tm = (
    (tokens == 5).mean(1) * 40 - (tokens == 12).mean(1) * 25 + rng.normal(0, 0.5, args.proteins)
)
delta_tm = delta_tm.astype(np.float32)

train_ds = (
    tf.data.Dataset.from_tensor_slices((tokens, delta_tm))
    .shuffle(args.proteins)
    .repeat()
    .batch(args.batch_size, drop_remainder=True)
    .prefetch(tf.data.AUTOTUNE)
)


class EncoderBlock(keras.layers.Layer):
    def __init__(self, d_model, heads, ff, **kwargs):
        super().__init__(**kwargs)
        self.attn = keras.layers.MultiHeadAttention(heads, d_model // heads)
        self.ff1 = keras.layers.Dense(ff, activation="gelu")
        self.ff2 = keras.layers.Dense(d_model)
        self.norm1 = keras.layers.LayerNormalization()
        self.norm2 = keras.layers.LayerNormalization()

    def call(self, x, training=False):
        x = self.norm1(x + self.attn(x, x, training=training))
        return self.norm2(x + self.ff2(self.ff1(x)))


def build_model():
    inputs = keras.Input(shape=(MAX_LEN,), dtype="int32")
    x = keras.layers.Embedding(len(AMINO) + 1, D_MODEL)(inputs)
    positions = keras.layers.Embedding(MAX_LEN, D_MODEL)(keras.ops.arange(MAX_LEN))
    x = x + positions
    for _ in range(2):
        x = EncoderBlock(D_MODEL, 4, 512)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(1)(x)
    return keras.Model(inputs, outputs)


def train(dataset):
    model = build_model()
    optimizer = keras.optimizers.AdamW(3e-4, weight_decay=1e-4)
    loss_fn = keras.losses.Huber()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = tf.squeeze(model(x, training=True), -1)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step, (x, y) in enumerate(dataset):
        if step >= args.steps:
            break
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:3d}  huber {loss:.4f}")
    return (times[-1] - times[4]) / (len(times) - 5), loss


sec_full, loss = train(train_ds)
report("steps_per_second", 1.0 / sec_full)
print(f"thermostability: {args.steps} steps, {sec_full * 1000:.1f} ms/step, loss {loss:.4f}")

if args.truth:
    batch = next(iter(train_ds))
    sec_cached, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
    )
