"""Train a 1-D CNN that classifies synthetic DNA sequences as promoter / non-promoter.

Data feeding: the sequences are kept in memory as Python strings. The batch is built inline in
the training loop body: a list comprehension one-hot encodes every base through a lookup table,
half of the sequences are reverse-complemented, and the rows are combined with ``np.stack`` on
the loop's own thread. The model is updated by a ``@tf.function`` step using ``tf.GradientTape``.
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

SEQ_LEN = 1000
N_SEQS = 4096
BATCH_SIZE = 64
STEPS = 150
WARMUP = 5
LOG_EVERY = 25
MOTIF = "TATAAT"
ONE_HOT = {
    "A": [1.0, 0.0, 0.0, 0.0],
    "C": [0.0, 1.0, 0.0, 0.0],
    "G": [0.0, 0.0, 1.0, 0.0],
    "T": [0.0, 0.0, 0.0, 1.0],
    "N": [0.25, 0.25, 0.25, 0.25],
}
COMPLEMENT = str.maketrans("ACGTN", "TGCAN")


def make_sequences(rng):
    bases = np.array(list("ACGT"))
    seqs, labels = [], []
    for _ in range(N_SEQS):
        s = "".join(rng.choice(bases, size=SEQ_LEN))
        label = int(rng.random() < 0.5)
        if label:
            pos = int(rng.integers(0, SEQ_LEN - len(MOTIF)))
            s = s[:pos] + MOTIF + s[pos + len(MOTIF) :]
        seqs.append(s)
        labels.append(label)
    return seqs, np.array(labels, dtype=np.float32)


def build_model():
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(SEQ_LEN, 4)),
            tf.keras.layers.Conv1D(16, 9, padding="same", activation="relu"),
            tf.keras.layers.Conv1D(16, 9, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling1D(2),
            tf.keras.layers.Conv1D(16, 9, padding="same", activation="relu"),
            tf.keras.layers.GlobalMaxPooling1D(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )


def train(seqs, labels, cached_batch=None):
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    rng = np.random.default_rng(1)
    history, step_times = [], []
    loss_sum = 0.0
    for step in range(STEPS):
        t0 = time.perf_counter()
        if cached_batch is None:
            idx = rng.integers(0, len(seqs), size=BATCH_SIZE)
            flips = rng.random(BATCH_SIZE) < 0.5
            rows = []
            for j, flip in zip(idx, flips, strict=True):
                s = seqs[j][::-1].translate(COMPLEMENT) if flip else seqs[j]
                rows.append(np.array([ONE_HOT[b] for b in s], dtype=np.float32))
            x = np.stack(rows)
            y = labels[idx].reshape(-1, 1)
        else:
            x, y = cached_batch
        loss = train_step(x, y).numpy()
        history.append(float(loss))
        loss_sum += float(loss)
        if (step + 1) % LOG_EVERY == 0:
            print(f"step {step + 1:4d}  loss {loss:.4f}  mean {loss_sum / (step + 1):.4f}")
        step_times.append(time.perf_counter() - t0)
    return step_times


def append_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", action="store_true", help="also measure input-wait fraction")
    args = parser.parse_args()

    tf.random.set_seed(0)
    seqs, labels = make_sequences(np.random.default_rng(0))
    times = train(seqs, labels)
    full = float(np.mean(times[WARMUP:]))
    append_result({"steps_per_second": 1.0 / full})
    summary = f"input_dna_inline: {STEPS} steps, {1.0 / full:.2f} steps/s"

    if args.truth:
        x = np.stack([np.array([ONE_HOT[b] for b in s], np.float32) for s in seqs[:BATCH_SIZE]])
        cached = (x, labels[:BATCH_SIZE].reshape(-1, 1))
        times = train(seqs, labels, cached)
        compute = float(np.mean(times[WARMUP:]))
        frac = min(1.0, max(0.0, (full - compute) / full))
        append_result({"truth_input_fraction": frac})
        summary += f", full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, truth {frac:.3f}"
    print(summary)


if __name__ == "__main__":
    main()
