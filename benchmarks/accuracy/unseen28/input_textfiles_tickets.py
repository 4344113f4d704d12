"""Support-ticket routing: classify customer tickets into queues.

The ticket export is one small .txt file per ticket ("queue<TAB>text" lines),
read with tf.data and tokenised against a fixed vocabulary.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

N_FILES = 6000
N_QUEUES = 8
VOCAB_SIZE = 4000
MAX_TOKENS = 120
EMBED = 48
BATCH = 64
STEPS = 120
LR = 2e-3


def make_vocab(seed=0):
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = set()
    while len(words) < VOCAB_SIZE - 2:
        words.add("".join(rng.choice(letters, size=int(rng.integers(3, 9)))))
    return sorted(words)


def write_tickets(folder, vocab, seed=0):
    rng = np.random.default_rng(seed)
    vocab = np.array(vocab)
    for i in range(N_FILES):
        lines = []
        for _ in range(int(rng.integers(1, 2))):
            q = int(rng.integers(0, N_QUEUES))
            n = int(rng.integers(30, 110))
            # each queue prefers a slice of the vocabulary
            ids = (rng.zipf(1.3, size=n) + q * 400) % len(vocab)
            text = " ".join(w.capitalize() if k % 11 == 0 else w for k, w in enumerate(vocab[ids]))
            lines.append(f"{q}\t{text}")
        with open(os.path.join(folder, f"ticket_{i:06d}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


def make_dataset(folder, table):
    def parse(line):
        parts = tf.strings.split(line, "\t", maxsplit=1)
        label = tf.strings.to_number(parts[0], out_type=tf.int32)
        text = tf.strings.regex_replace(tf.strings.lower(parts[1]), r"[^a-z ]", " ")
        tokens = tf.strings.split(text)
        ids = table.lookup(tokens)[:MAX_TOKENS]
        return ids, label

    files = tf.data.Dataset.list_files(os.path.join(folder, "*.txt"), shuffle=True)
    ds = files.interleave(tf.data.TextLineDataset, cycle_length=2)
    ds = ds.map(parse)
    ds = ds.padded_batch(BATCH, padded_shapes=([MAX_TOKENS], []), drop_remainder=True)
    return ds.repeat()


def build_model():
    inp = keras.Input((MAX_TOKENS,), dtype="int64")
    x = keras.layers.Embedding(VOCAB_SIZE, EMBED)(inp)
    x = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_QUEUES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        gaps = np.concatenate([np.diff(s) for s in self.stamps if len(s) > 1])
        return float(np.mean(gaps[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="u28_input_textfiles_tickets_")
    try:
        vocab = make_vocab()
        write_tickets(workdir, vocab)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(vocab), tf.range(2, len(vocab) + 2, dtype=tf.int64)
            ),
            default_value=1,
        )
        tickets = make_dataset(workdir, table)

        model = build_model()
        timer = StepTimer()
        model.fit(tickets, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=2)
        full = timer.seconds_per_step()
        write_out({"steps_per_second": 1.0 / full})
        summary = f"ticket routing: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

        if args.truth:
            batch = next(iter(tickets))
            fixed = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            timer2 = StepTimer()
            model2.fit(fixed, steps_per_epoch=STEPS, epochs=1, callbacks=[timer2], verbose=2)
            compute = timer2.seconds_per_step()
            frac = min(max((full - compute) / full, 0.0), 1.0)
            write_out({"truth_input_fraction": frac})
            summary += f", cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(summary)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
