"""Protein family classification from amino-acid sequences with a small Transformer encoder."""

import argparse
import json
import os
import time

import numpy as np
import keras
import tensorflow as tf

N_SEQS = 2048
SEQ_LEN = 128
VOCAB = 25
N_FAMILIES = 40
D_MODEL = 128
N_HEADS = 4
N_LAYERS = 2
BATCH_SIZE = 32
STEPS = 60


def synth_sequences(seed=0):
    rng = np.random.default_rng(seed)
    motifs = rng.integers(1, VOCAB, size=(N_FAMILIES, 12))
    labels = rng.integers(N_FAMILIES, size=N_SEQS)
    seqs = rng.integers(1, VOCAB, size=(N_SEQS, SEQ_LEN))
    for i, y in enumerate(labels):
        for _ in range(3):
            p = rng.integers(0, SEQ_LEN - 12)
            seqs[i, p : p + 12] = motifs[y]
    return seqs.astype(np.int32), labels.astype(np.int32)


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tok = keras.layers.Embedding(VOCAB, D_MODEL)
        self.pos = keras.layers.Embedding(SEQ_LEN, D_MODEL)

    def call(self, x):
        positions = keras.ops.arange(SEQ_LEN)
        return self.tok(x) + self.pos(positions)[None]


def encoder_block(x):
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS)(h, h)
    x = x + h
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.Dense(4 * D_MODEL, activation="gelu")(h)
    h = keras.layers.Dense(D_MODEL)(h)
    return x + h


def build_model():
    inp = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding()(inp)
    for _ in range(N_LAYERS):
        x = encoder_block(x)
    x = keras.layers.GlobalAveragePooling1D()(keras.layers.LayerNormalization()(x))
    out = keras.layers.Dense(N_FAMILIES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append((self.epoch, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        durations = [b - a for (e0, a), (e1, b) in zip(self.stamps, self.stamps[1:]) if e0 == e1]
        return float(np.mean(durations[skip - 1 :]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    seqs, labels = synth_sequences()
    ds = (
        tf.data.Dataset.from_tensor_slices((seqs, labels))
        .shuffle(N_SEQS)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )
    model = build_model()
    print(f"model parameters: {model.count_params():,}")
    timer = StepTimer()
    model.fit(ds, epochs=1, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    print(f"real input: {full * 1000:.1f} ms/step")
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        cached = tf.data.Dataset.from_tensors((seqs[:BATCH_SIZE], labels[:BATCH_SIZE])).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(cached, epochs=1, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        compute = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
