"""Per-residue protein secondary-structure prediction (helix / strand / coil).

A small Transformer encoder over amino-acid sequences, trained with model.fit on
in-memory integer arrays (synthetic sequences with position-dependent motifs).

    python compute_fit_protein_secondary_structure.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SEQ_LEN = 128
N_AA = 21  # 20 amino acids + padding
D_MODEL = 128
N_LAYERS = 2
N_HEADS = 4
BATCH_SIZE = 32
STEPS = 60
N_SEQS = 2048


def synth_proteins(n, seed=0):
    rng = np.random.default_rng(seed)
    helix_aa = np.array([1, 4, 7, 10, 13])  # "A, E, L, K, M"-like helix formers
    strand_aa = np.array([2, 6, 15, 18, 19])  # "V, I, Y, F, W"-like strand formers
    seqs = rng.integers(1, N_AA, size=(n, SEQ_LEN))
    ss = np.full((n, SEQ_LEN), 2, dtype=np.int32)
    for i in range(n):
        pos = 0
        while pos < SEQ_LEN - 6:
            kind = rng.choice(3, p=[0.35, 0.25, 0.4])
            length = int(rng.integers(4, 16))
            end = min(SEQ_LEN, pos + length)
            if kind == 0:
                seqs[i, pos:end] = rng.choice(helix_aa, size=end - pos)
            elif kind == 1:
                seqs[i, pos:end] = rng.choice(strand_aa, size=end - pos)
            ss[i, pos:end] = kind
            pos = end
    return seqs.astype(np.int32), ss


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tok = keras.layers.Embedding(N_AA, D_MODEL)
        self.pos = keras.layers.Embedding(SEQ_LEN, D_MODEL)

    def call(self, x):
        positions = tf.range(SEQ_LEN)
        return self.tok(x) + self.pos(positions)[None]


def encoder_block(x):
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS, dropout=0.1)(h, h)
    x = x + h
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.Dense(4 * D_MODEL, activation="gelu")(h)
    h = keras.layers.Dense(D_MODEL)(h)
    return x + h


def build_model():
    inp = keras.Input((SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding()(inp)
    for _ in range(N_LAYERS):
        x = encoder_block(x)
    x = keras.layers.LayerNormalization()(x)
    out = keras.layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inp, out, name="ss_transformer")
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def fit(x, y=None):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    if y is None:  # x is a dataset
        hist = model.fit(x, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=0)
    else:
        n = STEPS * BATCH_SIZE
        hist = model.fit(
            x[:n], y[:n], batch_size=BATCH_SIZE, epochs=1, callbacks=[timer], verbose=0
        )
    s = timer.stamps
    return (s[-1] - s[4]) / (len(s) - 5), hist.history


def dump(rec):
    if os.environ.get("ACCURACY_OUT"):
        with open(os.environ["ACCURACY_OUT"], "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    seqs, labels = synth_proteins(N_SEQS)
    full, hist = fit(seqs, labels)
    dump({"steps_per_second": 1 / full})
    out = f"protein-ss: {STEPS} steps, {1 / full:.2f} steps/s, acc {hist['accuracy'][-1]:.3f}"
    if args.truth:
        batch = (seqs[:BATCH_SIZE], labels[:BATCH_SIZE])
        compute, _ = fit(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (full - compute) / full))
        dump({"truth_input_fraction": frac})
        out += f", truth_input_fraction {frac:.3f}"
    print(out)


if __name__ == "__main__":
    main()
