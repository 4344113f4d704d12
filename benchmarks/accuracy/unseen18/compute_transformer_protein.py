"""Protein family classification with a small Transformer encoder over amino-acid sequences."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_SEQS = 4096
SEQ_LEN = 128
N_AMINO = 25
N_FAMILIES = 20
D_MODEL = 128
N_HEADS = 4
N_LAYERS = 2
BATCH_SIZE = 32
STEPS = 60


def make_sequences(rng):
    fam = rng.integers(0, N_FAMILIES, N_SEQS)
    motifs = rng.integers(1, N_AMINO, size=(N_FAMILIES, 12))
    seqs = rng.integers(1, N_AMINO, size=(N_SEQS, SEQ_LEN))
    for i in range(N_SEQS):
        for pos in rng.integers(0, SEQ_LEN - 12, 3):
            seqs[i, pos : pos + 12] = motifs[fam[i]]
    return seqs.astype(np.int32), fam.astype(np.int32)


def encoder_block(x):
    attn = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS)(x, x)
    x = keras.layers.LayerNormalization()(x + attn)
    ff = keras.layers.Dense(4 * D_MODEL, activation="gelu")(x)
    ff = keras.layers.Dense(D_MODEL)(ff)
    return keras.layers.LayerNormalization()(x + ff)


def build_model():
    inp = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    tok = keras.layers.Embedding(N_AMINO, D_MODEL)(inp)
    pos = keras.layers.Embedding(SEQ_LEN, D_MODEL)(keras.ops.arange(SEQ_LEN))
    x = tok + pos
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


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._last is None:
            self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=2)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(4)
    seqs, fams = make_sequences(rng)
    ds = (
        tf.data.Dataset.from_tensor_slices((seqs, fams))
        .shuffle(N_SEQS, seed=0)
        .repeat()
        .batch(BATCH_SIZE)
        .prefetch(tf.data.AUTOTUNE)
    )

    sec, loss = train(ds)
    print(f"real input: {sec * 1000:.1f} ms/step, loss {loss:.4f}")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
    if args.truth:
        batch = next(iter(ds))
        csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(1.0, max(0.0, (sec - csec) / sec))
        print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
