import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of each train batch; gaps within an epoch only."""

    def on_train_begin(self, logs=None):
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.cur = []
        self.epochs.append(self.cur)

    def on_train_batch_end(self, batch, logs=None):
        self.cur.append(time.perf_counter())

    def sec_per_step(self):
        gaps = []
        for ts in self.epochs:
            gaps.extend(np.diff(ts).tolist())
        return float(np.mean(gaps[5:]))


def emit(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def truth_fraction(full, compute):
    return float(min(1.0, max(0.0, (full - compute) / full)))
# Server-log next-token model: a 4-block causal Transformer decoder trained in a custom
# tf.function loop on token arrays already in memory (input is a numpy slice).
BATCH, STEPS, T, V, D = 32, 60, 128, 4000, 256


def block(x):
    a = keras.layers.MultiHeadAttention(8, D // 8)(x, x, use_causal_mask=True)
    x = keras.layers.LayerNormalization()(x + a)
    f = keras.layers.Dense(4 * D, activation="gelu")(x)
    return keras.layers.LayerNormalization()(x + keras.layers.Dense(D)(f))


def build_model():
    inp = keras.Input((T,), dtype="int32")
    h = keras.layers.Embedding(V, D)(inp)
    for _ in range(4):
        h = block(h)
    return keras.Model(inp, keras.layers.Dense(V)(h))


def train(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(3e-4)
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = lossf(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times = []
    for i in range(STEPS):
        x, y = get_batch(i)
        float(step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(32)
    toks = rng.integers(0, V, size=(2048, T + 1)).astype(np.int32)

    def get_batch(i):
        s = toks[(i * BATCH) % 2048:(i * BATCH) % 2048 + BATCH]
        return s[:, :-1], s[:, 1:]

    t0 = time.perf_counter()
    full = train(get_batch)
    emit("steps_per_second", 1.0 / full)
    msg = f"full {full*1000:.1f} ms/step"
    if args.truth:
        fixed = get_batch(0)
        comp = train(lambda i: fixed)
        f = truth_fraction(full, comp)
        emit("truth_input_fraction", f)
        msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {f:.3f}"
    print(f"compute_transformer_customloop_logs: {msg}, wall {time.perf_counter()-t0:.1f} s")


if __name__ == "__main__":
    main()
