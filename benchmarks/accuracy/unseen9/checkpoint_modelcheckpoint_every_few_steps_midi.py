"""Next-event prediction on MIDI-like event token streams, checkpointing very often.

Performance-MIDI style vocabulary (note-on/off, time-shift, velocity). Token windows are sliced
from an in-memory corpus (cached + prefetched tf.data). The model is small to run but has a big
embedding and output projection, and ModelCheckpoint saves the full model (.keras, with optimizer
state) every batch, which is what dominates the training time.
"""

import argparse
import json
import os
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

VOCAB = 3000  # 128 note-on + 128 note-off + 100 shifts + 32 velocities, plus chord/bar tokens
CTX = 32
EMB = 128
BATCH = 32
STEPS = 30
EPOCHS = 2
SAVE_EVERY = 1


def synth_corpus(rng, n_tokens=400_000):
    # random walk over pitches with interleaved time-shift / velocity tokens
    pitch = 60 + np.cumsum(rng.integers(-3, 4, n_tokens)) % 48
    kind = rng.integers(0, 4, n_tokens)
    shift = 256 + rng.integers(0, 100, n_tokens)
    vel = 356 + rng.integers(0, 32, n_tokens)
    extra = 388 + rng.zipf(1.5, n_tokens) % (VOCAB - 388)
    tok = np.select([kind == 0, kind == 1, kind == 2], [pitch, 128 + pitch, shift], vel)
    tok = np.where(rng.random(n_tokens) < 0.05, extra, tok)
    return tok.astype(np.int32)


def make_dataset(corpus):
    n = (len(corpus) - 1) // CTX
    x = corpus[: n * CTX].reshape(n, CTX)
    y = corpus[CTX : n * CTX + 1 : CTX]  # the event right after each window
    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache().shuffle(4096).repeat()
    return ds.batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def build_model():
    inp = keras.Input((CTX,), dtype="int32")
    h = keras.layers.Embedding(VOCAB, EMB)(inp)
    h = keras.layers.Conv1D(EMB, 3, padding="causal", activation="relu")(h)
    h = keras.layers.Conv1D(EMB, 3, padding="causal", dilation_rate=2, activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(2048, activation="relu")(h)
    out = keras.layers.Dense(VOCAB)(h)
    model = keras.Model(inp, out)
    model.compile(
        keras.optimizers.Adam(1e-3),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class Stopwatch(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.t = []

    def on_train_batch_end(self, batch, logs=None):
        self.t.append(time.perf_counter())

    def step_time(self, skip=5):
        return (self.t[-1] - self.t[skip - 1]) / (len(self.t) - skip)


def append_result(payload):
    dest = os.environ.get("ACCURACY_OUT")
    if dest:
        with open(dest, "a") as fp:
            fp.write(json.dumps(payload) + "\n")


def fit_with_checkpoints(data, ckpt_dir, tag):
    model = build_model()
    watch = Stopwatch()
    ckpt = keras.callbacks.ModelCheckpoint(
        os.path.join(ckpt_dir, f"{tag}_latest.keras"), save_freq=SAVE_EVERY
    )
    model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[ckpt, watch], verbose=2)
    return model, watch.step_time()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    corpus = synth_corpus(np.random.default_rng(9))
    ds = make_dataset(corpus)
    ckpt_dir = tempfile.mkdtemp(prefix="midi_ckpt_")
    model, full = fit_with_checkpoints(ds, ckpt_dir, "run")
    size = os.path.getsize(os.path.join(ckpt_dir, "run_latest.keras")) / 1e6
    print(f"{model.count_params():,} params, checkpoint {size:.0f} MB every {SAVE_EVERY} steps")
    append_result({"steps_per_second": 1.0 / full})
    print(f"{1.0 / full:.2f} steps/s")

    if args.truth:
        one = tf.data.Dataset.from_tensors(next(iter(ds))).repeat()
        _, compute = fit_with_checkpoints(one, ckpt_dir, "cached")
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        print(f"truth input fraction {frac:.3f} ({full:.3f}s vs {compute:.3f}s per step)")


if __name__ == "__main__":
    main()
