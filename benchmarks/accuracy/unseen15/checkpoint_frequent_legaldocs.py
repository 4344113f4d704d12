"""Legal clause-type classifier (bag of n-gram embeddings) with frequent checkpoints.

Usage: python checkpoint_frequent_legaldocs.py [--truth]
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np

import keras
import tensorflow as tf
from keras import layers

VOCAB = 150000
EMBED_DIM = 128
SEQ_LEN = 200
N_DOCS = 8192
N_CLAUSE_TYPES = 41
BATCH_SIZE = 64
STEPS = 56
SAVE_EVERY = 4
SEED = 19


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.marks = []
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((self.epoch, batch + 1, time.perf_counter()))

    def seconds_per_step(self, skip=5):
        seen, total_t, total_n, prev = 0, 0.0, 0, None
        for epoch, done, t in self.marks:
            if prev is not None and prev[0] == epoch:
                n = done - prev[1]
                if seen >= skip:
                    total_t += t - prev[2]
                    total_n += n
                seen += n
            else:
                seen += done
            prev = (epoch, done, t)
        return total_t / max(total_n, 1)


def make_corpus(rng):
    labels = rng.integers(0, N_CLAUSE_TYPES, size=N_DOCS)
    key_terms = rng.integers(1, VOCAB, size=(N_CLAUSE_TYPES, 30))
    docs = rng.zipf(1.3, size=(N_DOCS, SEQ_LEN)) % VOCAB
    for i, lab in enumerate(labels):
        pos = rng.integers(0, SEQ_LEN, size=20)
        docs[i, pos] = rng.choice(key_terms[lab], size=20)
    return docs.astype(np.int32), labels.astype(np.int32)


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = layers.Embedding(VOCAB, EMBED_DIM)(inputs)
    x = layers.Conv1D(128, 3, padding="same", activation="relu")(x)
    x = layers.GlobalMaxPooling1D()(x)
    x = layers.Dense(256, activation="relu")(x)
    x = layers.Dropout(0.3)(x)
    outputs = layers.Dense(N_CLAUSE_TYPES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="clause_classifier")
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(dataset, ckpt_dir):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    checkpoint = keras.callbacks.ModelCheckpoint(
        os.path.join(ckpt_dir, "clause_{epoch:02d}_{batch:04d}.keras"),
        save_freq=SAVE_EVERY,
        save_best_only=False,
    )
    clock = StepClock()
    model.fit(dataset, epochs=1, steps_per_epoch=STEPS, callbacks=[checkpoint, clock], verbose=2)
    return clock.seconds_per_step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    docs, labels = make_corpus(rng)
    ds = (
        tf.data.Dataset.from_tensor_slices((docs, labels))
        .shuffle(N_DOCS, seed=SEED)
        .repeat()
        .batch(BATCH_SIZE, drop_remainder=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    ckpt_dir = tempfile.mkdtemp(prefix="u15_checkpoint_frequent_legaldocs_")
    try:
        full = train(ds, ckpt_dir)
        n_ckpt = len(os.listdir(ckpt_dir))
        print(f"{n_ckpt} checkpoints written")
        append_result({"steps_per_second": 1.0 / full})

        if args.truth:
            batch = next(iter(ds))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat(), ckpt_dir)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            append_result({"truth_input_fraction": frac})
            print(
                f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
                f"input fraction {frac:.2f}"
            )
        else:
            print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
