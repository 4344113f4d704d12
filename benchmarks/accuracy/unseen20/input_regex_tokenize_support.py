"""Support-ticket routing: classify customer messages into queues."""

import argparse
import json
import os
import re
import time

import numpy as np
import tensorflow as tf
import keras

SEQ_LEN = 256
VOCAB_SIZE = 20000
N_QUEUES = 8
BATCH_SIZE = 64
STEPS = 150

QUEUE_WORDS = [
    "refund charge invoice billing payment card",
    "password login account locked reset sso",
    "crash error exception freeze bug stacktrace",
    "shipping delivery tracking courier package late",
    "upgrade plan pricing seats license enterprise",
    "api webhook token rate limit endpoint",
    "cancel subscription close account delete data",
    "feature request roadmap suggestion idea improve",
]
FILLER = (
    "hi hello team please thanks regards i we our the a an is are was have has not can "
    "could would help asap urgent today yesterday again still issue problem question since"
).split()

URL_RE = re.compile(r"https?://\S+")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
NUM_RE = re.compile(r"\b\d+(?:[.,]\d+)*\b")
ORDER_RE = re.compile(r"\b(?:order|ticket|case)\s*#?\s*[a-z0-9-]+\b")
PUNCT_RE = re.compile(r"[^\w\s<>]")
SPACE_RE = re.compile(r"\s+")
TOKEN_RE = re.compile(r"<\w+>|[a-z]+(?:'[a-z]+)?")


def build_vocab():
    words = set(FILLER)
    for q in QUEUE_WORDS:
        words.update(q.split())
    for i in range(VOCAB_SIZE - len(words) - 8):
        words.add(f"w{i}")
    vocab = {"<pad>": 0, "<unk>": 1, "<url>": 2, "<email>": 3, "<num>": 4, "<ref>": 5}
    for w in sorted(words):
        vocab[w] = len(vocab)
    return vocab


VOCAB = build_vocab()


def make_ticket(rng, label):
    n = int(rng.integers(500, 1000))
    topic = QUEUE_WORDS[label].split()
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.15:
            parts.append(topic[rng.integers(len(topic))].capitalize())
        elif r < 0.18:
            parts.append(f"order #{rng.integers(10000, 99999)}-X")
        elif r < 0.2:
            parts.append(f"https://support.example.com/kb/{rng.integers(1000)}?ref=mail")
        elif r < 0.21:
            parts.append(f"user{rng.integers(999)}@corp-mail.com,")
        elif r < 0.25:
            parts.append(f"{rng.integers(1, 500)}.{rng.integers(99)}")
        elif r < 0.3:
            parts.append(f"w{rng.integers(VOCAB_SIZE - 200)}!")
        else:
            parts.append(FILLER[rng.integers(len(FILLER))])
    return " ".join(parts)


def tokenize(text):
    text = text.lower()
    text = URL_RE.sub(" <url> ", text)
    text = EMAIL_RE.sub(" <email> ", text)
    text = ORDER_RE.sub(" <ref> ", text)
    text = NUM_RE.sub(" <num> ", text)
    text = PUNCT_RE.sub(" ", text)
    text = SPACE_RE.sub(" ", text).strip()
    ids = [VOCAB.get(tok, 1) for tok in TOKEN_RE.findall(text)]
    ids = ids[:SEQ_LEN]
    return ids + [0] * (SEQ_LEN - len(ids))


def ticket_stream(seed):
    rng = np.random.default_rng(seed)
    tickets = []
    labels = rng.integers(0, N_QUEUES, size=600)
    for lab in labels:
        tickets.append(make_ticket(rng, int(lab)))
    i = 0
    while True:
        j = i % len(tickets)
        yield np.asarray(tokenize(tickets[j]), dtype="int32"), np.int32(labels[j])
        i += 1


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        lambda: ticket_stream(0),
        output_signature=(
            tf.TensorSpec((SEQ_LEN,), tf.int32),
            tf.TensorSpec((), tf.int32),
        ),
    )
    return ds.batch(BATCH_SIZE)


def build_model():
    inputs = keras.Input(shape=(SEQ_LEN,), dtype="int32")
    x = keras.layers.Embedding(VOCAB_SIZE + 8, 64)(inputs)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    outputs = keras.layers.Dense(N_QUEUES)(x)
    return keras.Model(inputs, outputs)


def train(model, next_batch, steps):
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function(reduce_retracing=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    last = time.perf_counter()
    for step in range(steps):
        x, y = next_batch()
        loss = float(train_step(x, y))
        now = time.perf_counter()
        times.append(now - last)
        last = now
        if step % 50 == 0:
            print(f"step {step}: loss {loss:.4f}")
    return float(np.mean(times[5:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    dataset = make_dataset()
    iterator = iter(dataset)
    full = train(build_model(), lambda: next(iterator), STEPS)
    write_out({"steps_per_second": 1.0 / full})
    summary = f"full: {full * 1000:.1f} ms/step ({1.0 / full:.2f} steps/s)"

    if args.truth:
        xb, yb = next(iter(dataset))
        compute = train(build_model(), lambda: (xb, yb), STEPS)
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_out({"truth_input_fraction": frac})
        summary += f", compute: {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(summary)


if __name__ == "__main__":
    main()
