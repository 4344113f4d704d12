"""Protein family classification from raw amino-acid sequences (3-mer tokens + CNN).

Custom training loop with GradientTape.
"""

import argparse
import itertools
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

AMINO = "ACDEFGHIKLMNPQRSTVWY"
N_SEQ = 6000
N_FAMILIES = 12
MAX_LEN = 400
BATCH_SIZE = 48
STEPS = 130
LR = 1e-3
SEED = 5

KYTE_DOOLITTLE = dict(zip(AMINO, [1.8, 2.5, -3.5, -3.5, 2.8, -0.4, -3.2, 4.5, -3.9, 3.8,
                                  1.9, -3.5, -1.6, -3.5, -4.5, -0.8, -0.7, 4.2, -0.9, -1.3]))  # fmt: skip
FLEXIBILITY = dict(zip(AMINO, [0.36, 0.35, 0.51, 0.5, 0.31, 0.54, 0.32, 0.46, 0.47, 0.37,
                               0.3, 0.46, 0.51, 0.49, 0.53, 0.51, 0.44, 0.39, 0.31, 0.42]))  # fmt: skip
BETA_SHEET = dict(zip(AMINO, [0.83, 1.19, 0.54, 0.37, 1.38, 0.75, 0.87, 1.6, 0.74, 1.3,
                              1.05, 0.89, 0.55, 1.1, 0.93, 0.75, 1.19, 1.7, 1.37, 1.47]))  # fmt: skip
WINDOW = 9
KMER_VOCAB = {"".join(k): i + 2 for i, k in enumerate(itertools.product(AMINO, repeat=3))}
VOCAB_SIZE = len(KMER_VOCAB) + 2


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--steps", type=int, default=STEPS)
    return p.parse_args()


def synth_sequences(rng):
    motifs = ["".join(rng.choice(list(AMINO), 8)) for _ in range(N_FAMILIES)]
    seqs, labels = [], []
    for _ in range(N_SEQ):
        fam = int(rng.integers(0, N_FAMILIES))
        length = int(rng.integers(250, 600))
        s = list(rng.choice(list(AMINO), length))
        for _ in range(3):
            pos = int(rng.integers(0, length - 8))
            s[pos : pos + 8] = motifs[fam]
        seqs.append("".join(s))
        labels.append(fam)
    return seqs, np.array(labels, dtype=np.int32)


def tokenize(seq):
    seq = seq.numpy().decode("ascii").upper()
    # drop ambiguous residues, then overlapping 3-mers
    seq = "".join(c for c in seq if c in AMINO)
    ids = [KMER_VOCAB.get(seq[i : i + 3], 1) for i in range(len(seq) - 2)]
    ids = ids[:MAX_LEN] + [0] * max(0, MAX_LEN - len(ids))
    comp = [seq.count(a) / max(len(seq), 1) for a in AMINO]
    # sliding-window hydropathy and flexibility profiles
    half = WINDOW // 2
    profile = []
    for i in range(min(len(seq), MAX_LEN)):
        win = seq[max(0, i - half) : i + half + 1]
        hyd = sum(KYTE_DOOLITTLE[c] for c in win) / len(win)
        flex = sum(FLEXIBILITY[c] for c in win) / len(win)
        beta = sum(BETA_SHEET[c] for c in win) / len(win)
        profile.append((hyd / 4.5, flex, beta))
    profile += [(0.0, 0.0, 0.0)] * (MAX_LEN - len(profile))
    return (
        np.array(ids, dtype=np.int32),
        np.array(profile, dtype=np.float32),
        np.array(comp, dtype=np.float32),
    )


def tf_tokenize(seq, label):
    ids, profile, comp = tf.py_function(tokenize, [seq], [tf.int32, tf.float32, tf.float32])
    ids.set_shape((MAX_LEN,))
    profile.set_shape((MAX_LEN, 3))
    comp.set_shape((len(AMINO),))
    return (ids, profile, comp), label


def make_dataset(seqs, labels):
    ds = tf.data.Dataset.from_tensor_slices((seqs, labels))
    ds = ds.shuffle(len(seqs), seed=SEED).repeat()
    ds = ds.map(tf_tokenize)
    ds = ds.batch(BATCH_SIZE)
    return ds


def build_model():
    ids = keras.Input(shape=(MAX_LEN,), dtype="int32")
    profile = keras.Input(shape=(MAX_LEN, 3))
    comp = keras.Input(shape=(len(AMINO),))
    x = keras.layers.Embedding(VOCAB_SIZE, 24)(ids)
    x = keras.layers.Concatenate()([x, profile])
    x = keras.layers.Conv1D(32, 9, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(32, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Concatenate()([x, keras.layers.Dense(16, activation="relu")(comp)])
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(N_FAMILIES)(x)
    return keras.Model([ids, profile, comp], out)


def train(model, batches, steps):
    optimizer = keras.optimizers.Adam(LR)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()
    step_end = []
    for step, (x, y) in enumerate(batches):
        if step >= steps:
            break
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(y, logits)
        loss_value = float(loss)
        step_end.append(time.perf_counter())
        if step % 100 == 0:
            print(f"step {step:4d} loss {loss_value:.4f} acc {float(acc.result()):.3f}")
    return step_end


def seconds_per_step(start, step_end):
    times = np.diff(np.array([start] + step_end))
    return float(np.mean(times[5:]))


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    seqs, labels = synth_sequences(rng)
    print(f"{len(seqs)} sequences, vocab {VOCAB_SIZE}")

    model = build_model()
    t0 = time.perf_counter()
    ends = train(model, make_dataset(seqs, labels), args.steps)
    full = seconds_per_step(t0, ends)
    print(f"trained {len(ends)} steps in {ends[-1] - t0:.1f}s")
    out_path = os.environ.get("ACCURACY_OUT")
    if out_path:
        with open(out_path, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

    if args.truth:
        batch = next(iter(make_dataset(seqs, labels)))
        model2 = build_model()
        t1 = time.perf_counter()
        ends2 = train(model2, itertools.repeat(batch), args.steps)
        compute = seconds_per_step(t1, ends2)
        frac = min(1.0, max(0.0, (full - compute) / full))
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
        print(f"truth: full={full * 1000:.2f}ms compute={compute * 1000:.2f}ms frac={frac:.2f}")
    print(f"protein CNN: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")


if __name__ == "__main__":
    main()
