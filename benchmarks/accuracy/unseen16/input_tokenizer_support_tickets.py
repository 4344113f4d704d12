"""Routes customer-support tickets to one of several queues from the ticket text."""

import argparse
import json
import os
import re
import time

import numpy as np
import keras
import tensorflow as tf

BATCH_SIZE = 32
STEPS = 180
MAX_LEN = 256
EMBED_DIM = 64
N_QUEUES = 8

QUEUE_WORDS = {
    0: "refund charge invoice billing overcharged payment card declined",
    1: "password login locked account reset twofactor authentication",
    2: "shipping delivery tracking package courier delayed lost parcel",
    3: "crash error bug freeze update version install broken",
    4: "cancel subscription plan downgrade renewal trial",
    5: "feature request suggestion improve roadmap integration api",
    6: "privacy data delete gdpr export personal consent",
    7: "hardware device battery screen charger warranty replacement",
}
FILLER = (
    "hi hello team please help i have been trying to since yesterday and it still does not "
    "work thanks regards customer order number attached screenshot urgent asap again"
).split()

PREFIXES = ("re", "un", "over", "pre")
SUFFIXES = ("ing", "ed", "ly", "ment", "ness", "s")


def build_vocab():
    words = set(FILLER)
    for text in QUEUE_WORDS.values():
        words.update(text.split())
    pieces = sorted(words) + list(PREFIXES) + ["##" + s for s in SUFFIXES]
    pieces += [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]
    return {p: i + 2 for i, p in enumerate(pieces)}


VOCAB = build_vocab()
TOKEN_RE = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def wordpiece(word):
    if word in VOCAB:
        return [VOCAB[word]]
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in VOCAB:
                found = VOCAB[piece]
                break
            if start > 0 and word[start:end] in VOCAB:
                found = VOCAB[word[start:end]]
                break
            end -= 1
        if found is None:
            ids.append(1)
            start += 1
        else:
            ids.append(found)
            start = end
    return ids


def tokenize(text):
    text = text.lower()
    text = re.sub(r"https?://\S+", " url ", text)
    text = re.sub(r"\s+", " ", text)
    ids = []
    for tok in TOKEN_RE.findall(text):
        ids.extend(wordpiece(tok))
    return ids[:MAX_LEN]


def synth_ticket(rng):
    queue = int(rng.integers(N_QUEUES))
    topic = QUEUE_WORDS[queue].split()
    n_words = int(rng.integers(130, 380))
    words = []
    for _ in range(n_words):
        if rng.random() < 0.3:
            w = topic[rng.integers(len(topic))]
        else:
            w = FILLER[rng.integers(len(FILLER))]
        r = rng.random()
        if r < 0.2:
            w = w + SUFFIXES[rng.integers(len(SUFFIXES))]
        elif r < 0.3:
            w = PREFIXES[rng.integers(len(PREFIXES))] + w
        elif r < 0.35:
            w = w + str(rng.integers(1000))
        words.append(w.upper() if rng.random() < 0.05 else w)
    if rng.random() < 0.3:
        words.append(f"https://support.example.com/t/{rng.integers(10**6)}")
    return " ".join(words) + " !", queue


def ticket_stream(seed):
    rng = np.random.default_rng(seed)
    while True:
        text, queue = synth_ticket(rng)
        yield np.asarray(tokenize(text), np.int32), np.int32(queue)


def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        lambda: ticket_stream(seed),
        output_signature=(
            tf.TensorSpec(shape=(None,), dtype=tf.int32),
            tf.TensorSpec(shape=(), dtype=tf.int32),
        ),
    )
    return ds.padded_batch(BATCH_SIZE, padded_shapes=([MAX_LEN], []), drop_remainder=True)


def build_model():
    inp = keras.Input(shape=(None,), dtype="int32")
    x = keras.layers.Embedding(max(VOCAB.values()) + 1, EMBED_DIM)(inp)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(N_QUEUES)(x)
    return keras.Model(inp, out)


def train(dataset, steps):
    model = build_model()
    optimizer = keras.optimizers.AdamW(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(
        input_signature=[
            tf.TensorSpec([BATCH_SIZE, MAX_LEN], tf.int32),
            tf.TensorSpec([BATCH_SIZE], tf.int32),
        ]
    )
    def train_step(tokens, labels):
        with tf.GradientTape() as tape:
            logits = model(tokens, training=True)
            loss = loss_fn(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for step, (tokens, labels) in enumerate(dataset.take(steps)):
        loss = float(train_step(tokens, labels))
        stamps.append(time.perf_counter())
        if step % 45 == 0:
            print(f"step {step:4d}  loss {loss:.4f}  seq_len {tokens.shape[1]}")
    return float(np.mean(np.diff(stamps)[4:]))


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()
    print(f"vocab size {max(VOCAB.values()) + 1}")

    full = train(make_dataset(seed=0), STEPS)
    print(f"real input: {full * 1000:.1f} ms/step")
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        batch = next(iter(make_dataset(seed=1)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat(), STEPS)
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
