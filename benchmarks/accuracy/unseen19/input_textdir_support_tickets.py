"""Route customer support tickets to the right team from the ticket text."""

import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--tickets", type=int, default=2000)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps", type=int, default=120)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

TEAMS = ["billing", "shipping", "returns", "technical", "account", "sales"]
VOCAB_SIZE = 20000
SEQ_LEN = 512


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


class StepClock(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.marks = []

    def on_train_batch_end(self, batch, logs=None):
        self.marks.append((int(self.model.optimizer.iterations.numpy()), time.perf_counter()))

    def seconds_per_step(self, skip=5):
        marks = [m for m in self.marks if m[0] >= skip]
        return (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])


def write_tickets(root):
    rng = np.random.default_rng(3)
    common = np.array([f"w{i}" for i in range(3000)])
    team_words = {t: [f"{t}_{i}" for i in range(200)] for t in TEAMS}
    for team in TEAMS:
        os.makedirs(os.path.join(root, team))
    for n in range(args.tickets):
        team = TEAMS[n % len(TEAMS)]
        length = int(rng.integers(1600, 3200))
        words = rng.choice(common, size=length).tolist()
        for pos in rng.integers(0, length, size=length // 10):
            words[pos] = team_words[team][rng.integers(0, 200)]
        body = " ".join(words)
        with open(os.path.join(root, team, f"ticket_{n:06d}.txt"), "w") as f:
            f.write(
                f"<p>Subject: help needed with order #{rng.integers(10**6, 10**7)}</p><br />"
                f"From: customer{n}@example.com<br />{body}<br />"
                f"See https://support.example.com/t/{n} or call +1-555-{n % 10000:04d}.\n"
            )


def clean_ticket(text):
    text = tf.strings.lower(text)
    text = tf.strings.regex_replace(text, r"<[^>]+>", " ")
    text = tf.strings.regex_replace(text, r"https?://\S+", " urltoken ")
    text = tf.strings.regex_replace(text, r"[\w.+-]+@[\w-]+\.[\w.]+", " emailtoken ")
    text = tf.strings.regex_replace(text, r"#\d+", " ordertoken ")
    text = tf.strings.regex_replace(text, r"\+?\d[\d-]{6,}\d", " phonetoken ")
    text = tf.strings.regex_replace(text, r"[^a-z0-9_ ]", " ")
    return tf.strings.regex_replace(text, r"\s+", " ")


def build_model():
    model = keras.Sequential(
        [
            keras.Input(shape=(SEQ_LEN,), dtype="int64"),
            keras.layers.Embedding(VOCAB_SIZE, 64),
            keras.layers.Conv1D(64, 5, activation="relu"),
            keras.layers.GlobalMaxPooling1D(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(len(TEAMS)),
        ]
    )
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


data_dir = tempfile.mkdtemp(prefix="u19_textdir_tickets_")
try:
    t0 = time.perf_counter()
    write_tickets(data_dir)
    print(f"wrote {args.tickets} tickets in {time.perf_counter() - t0:.1f}s")

    raw_train = keras.utils.text_dataset_from_directory(
        data_dir, batch_size=args.batch_size, shuffle=True, seed=42
    )
    vectorizer = keras.layers.TextVectorization(
        max_tokens=VOCAB_SIZE,
        output_sequence_length=SEQ_LEN,
        ngrams=3,
        standardize=clean_ticket,
    )
    vectorizer.adapt(raw_train.take(10).map(lambda text, label: text))

    train_ds = raw_train.map(lambda text, label: (vectorizer(text), label)).repeat()

    clock = StepClock()
    model = build_model()
    model.fit(train_ds, epochs=1, steps_per_epoch=args.steps, callbacks=[clock], verbose=2)
    sec_full = clock.seconds_per_step()
    report("steps_per_second", 1.0 / sec_full)
    print(f"ticket router: {args.steps} steps, {sec_full * 1000:.1f} ms/step")

    if args.truth:
        batch = next(iter(train_ds))
        cached = tf.data.Dataset.from_tensors(batch).repeat()
        clock2 = StepClock()
        model2 = build_model()
        model2.fit(cached, epochs=1, steps_per_epoch=args.steps, callbacks=[clock2], verbose=0)
        sec_cached = clock2.seconds_per_step()
        frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
        report("truth_input_fraction", frac)
        print(
            f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
        )
finally:
    shutil.rmtree(data_dir, ignore_errors=True)
