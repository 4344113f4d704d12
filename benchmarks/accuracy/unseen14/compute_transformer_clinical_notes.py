"""ICD chapter tagging of (pre-tokenised) clinical notes with a small Transformer encoder."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

VOCAB = 16_000
SEQ_LEN = 128
N_NOTES = 4096
N_LABELS = 18
D_MODEL = 192
N_HEADS = 6
FF_DIM = 768
N_LAYERS = 3
BATCH_SIZE = 16
STEPS = 60
SEED = 41


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_train_begin(self, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def synth_notes(rng):
    tokens = rng.zipf(1.3, size=(N_NOTES, SEQ_LEN)) % (VOCAB - 1) + 1
    lengths = rng.integers(48, SEQ_LEN, N_NOTES)
    tokens[np.arange(SEQ_LEN)[None, :] >= lengths[:, None]] = 0
    labels = np.zeros((N_NOTES, N_LABELS), dtype=np.float32)
    for i in range(N_NOTES):
        labels[i, rng.choice(N_LABELS, rng.integers(1, 4), replace=False)] = 1.0
    return tokens.astype(np.int32), labels


class PositionalEmbedding(keras.layers.Layer):
    def __init__(self, vocab, length, dim, **kw):
        super().__init__(**kw)
        self.tok = keras.layers.Embedding(vocab, dim)
        self.pos = keras.layers.Embedding(length, dim)

    def call(self, x):
        positions = keras.ops.arange(keras.ops.shape(x)[-1])
        return self.tok(x) + self.pos(positions)[None]


def encoder_block(x):
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.MultiHeadAttention(N_HEADS, D_MODEL // N_HEADS, dropout=0.1)(h, h)
    x = x + h
    h = keras.layers.LayerNormalization()(x)
    h = keras.layers.Dense(FF_DIM, activation="gelu")(h)
    h = keras.layers.Dense(D_MODEL)(h)
    return x + h


def build_model():
    inp = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = PositionalEmbedding(VOCAB, SEQ_LEN, D_MODEL)(inp)
    for _ in range(N_LAYERS):
        x = encoder_block(x)
    x = keras.layers.LayerNormalization()(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    out = keras.layers.Dense(N_LABELS, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.AdamW(3e-4),
        loss="binary_crossentropy",
        metrics=[keras.metrics.AUC(multi_label=True, name="auc")],
    )
    return model


def make_dataset(tokens, labels):
    ds = tf.data.Dataset.from_tensor_slices((tokens, labels))
    ds = ds.shuffle(N_NOTES, seed=SEED).repeat().batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)
    return ds


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    tokens, labels = synth_notes(rng)

    model = build_model()
    print(f"encoder params: {model.count_params():,}")
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(
        make_dataset(tokens, labels),
        epochs=1,
        steps_per_epoch=args.steps,
        callbacks=[clock],
        verbose=0,
    )
    full = clock.seconds_per_step()
    print(
        f"trained {args.steps} steps in {time.perf_counter() - t0:.1f}s, "
        f"auc={hist.history['auc'][-1]:.3f}"
    )
    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

    if args.truth:
        batch = next(iter(make_dataset(tokens, labels)))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        clock2 = StepClock()
        model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
        compute = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
    print(f"clinical transformer: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")


if __name__ == "__main__":
    main()
