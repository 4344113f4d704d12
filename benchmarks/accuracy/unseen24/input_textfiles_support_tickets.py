"""Support ticket routing: classify raw ticket text files into queues.

Tickets are exported one text file per ticket; a generator reads them from
disk, lower-cases them and maps characters through a fixed vocabulary. A
character CNN is trained with a custom GradientTape loop.
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

N_TICKETS = 8000
MAX_CHARS = 1024
N_QUEUES = 6
BATCH_SIZE = 64
STEPS = 300
LR = 1e-3

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(5)

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 .,;:!?'\"-_/@#()\n"
VOCAB = {ch: i + 2 for i, ch in enumerate(ALPHABET)}  # 0 = pad, 1 = unknown

QUEUE_WORDS = [
    ["invoice", "refund", "charge", "billing", "payment"],
    ["password", "login", "2fa", "locked", "reset"],
    ["crash", "error", "exception", "stacktrace", "bug"],
    ["shipping", "delivery", "tracking", "courier", "late"],
    ["upgrade", "plan", "pricing", "seats", "license"],
    ["gdpr", "delete", "privacy", "export", "consent"],
]
FILLER = (
    "hello team i have a problem with my account since yesterday please help "
    "thanks regards customer order number reference the app website mobile "
    "desktop version browser chrome firefox windows mac android ios"
).split()


def write_tickets(root):
    labels = {}
    for i in range(N_TICKETS):
        q = int(rng.integers(N_QUEUES))
        words = list(rng.choice(FILLER, size=rng.integers(180, 320)))
        for _ in range(rng.integers(3, 8)):
            words.insert(int(rng.integers(len(words))), str(rng.choice(QUEUE_WORDS[q])))
        body = f"Subject: Ticket #{100000 + i}\nFrom: user{i}@example.com\n\n" + " ".join(words)
        for _ in range(rng.integers(2, 6)):
            quoted = " ".join(rng.choice(FILLER, size=160))
            body += "\n\nOn Mon, Agent wrote:\n> " + quoted.replace(" help ", "\n> help ")
        name = os.path.join(root, f"ticket_{i:06d}.txt")
        with open(name, "w") as f:
            f.write(body.capitalize())
        labels[name] = q
    return labels


def encode(text):
    ids = []
    for line in text.splitlines():
        if line.startswith("On ") and line.endswith("wrote:"):
            continue
        line = line.lstrip("> ")
        prev = None
        for ch in line:
            ch = ch.lower()
            if ch.isspace():
                ch = " "
            if ch == " " and prev == " ":
                continue
            idx = VOCAB.get(ch)
            if idx is None:
                idx = 1
            ids.append(idx)
            prev = ch
        ids.append(VOCAB["\n"])
    out = np.zeros(MAX_CHARS, dtype=np.int32)
    ids = ids[:MAX_CHARS]
    out[: len(ids)] = ids
    return out


def ticket_batches(paths, labels, seed):
    gen = np.random.default_rng(seed)
    while True:
        order = gen.permutation(len(paths))
        for start in range(0, len(order) - BATCH_SIZE + 1, BATCH_SIZE):
            xs, ys = [], []
            for j in order[start : start + BATCH_SIZE]:
                with open(paths[j], encoding="utf-8") as f:
                    text = f.read()
                xs.append(encode(text))
                ys.append(labels[paths[j]])
            yield np.stack(xs), np.array(ys, dtype=np.int32)


def build_model():
    inputs = keras.Input(shape=(MAX_CHARS,), dtype="int32")
    x = keras.layers.Embedding(len(VOCAB) + 2, 16)(inputs)
    x = keras.layers.Conv1D(32, 7, strides=3, activation="relu", padding="same")(x)
    x = keras.layers.Conv1D(64, 5, strides=2, activation="relu", padding="same")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(N_QUEUES)(x)
    return keras.Model(inputs, outputs)


def train(batches, tag):
    model = build_model()
    optimizer = keras.optimizers.Adam(LR)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step in range(STEPS):
        x, y = next(batches)
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if step % 100 == 0:
            print(f"[{tag}] step {step} loss {loss:.4f}")
    return float(np.mean(np.diff(times)[4:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def repeat_batch(batch):
    while True:
        yield batch


tmp = tempfile.mkdtemp(prefix="u24_input_textfiles_")
try:
    print("writing tickets ...")
    labels = write_tickets(tmp)
    paths = sorted(labels)
    full = train(ticket_batches(paths, labels, seed=0), "train")
    write_out({"steps_per_second": 1.0 / full})
    summary = f"support tickets: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
    if args.truth:
        batch = next(ticket_batches(paths, labels, seed=1))
        compute = train(repeat_batch(batch), "cached")
        frac = min(max((full - compute) / full, 0.0), 1.0)
        write_out({"truth_input_fraction": frac})
        summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
