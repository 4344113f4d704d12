"""Promoter vs background classification on DNA windows (synthetic genome).

A plain Python generator cuts random windows out of a long chromosome string, applies
reverse-complement and point-mutation augmentation, one-hot encodes with a dict lookup and adds
per-window GC / CpG / k-mer features. The generator is passed straight to model.fit.
Conv1D network, batch 32, EarlyStopping on training loss.
"""

import argparse
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

WINDOW = 1000
BATCH = 32
STEPS_PER_EPOCH = 60
EPOCHS = 3
KMER_SIZES = (3, 4, 5)
N_KMER = sum(4**k for k in KMER_SIZES)
MOTIF = "TATAAAAGGCGCGCCAAT"
COMP = {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N"}
ONEHOT = {
    "A": (1.0, 0.0, 0.0, 0.0),
    "C": (0.0, 1.0, 0.0, 0.0),
    "G": (0.0, 0.0, 1.0, 0.0),
    "T": (0.0, 0.0, 0.0, 1.0),
    "N": (0.25, 0.25, 0.25, 0.25),
}
KMER_INDEX = {}
for _k in KMER_SIZES:
    for _i in range(4**_k):
        _s = "".join("ACGT"[(_i >> (2 * j)) & 3] for j in range(_k))
        KMER_INDEX[_s] = len(KMER_INDEX)


def make_chromosome(rng, length=2_000_000):
    seq = rng.choice(list("ACGT"), size=length, p=[0.29, 0.21, 0.21, 0.29])
    starts = rng.choice(length - 2 * WINDOW, size=1500, replace=False)
    for s in starts:
        seq[s + 400 : s + 400 + len(MOTIF)] = list(MOTIF)
    return "".join(seq), np.sort(starts)


def encode_window(seq, rng):
    if rng.random() < 0.5:
        seq = "".join(COMP[c] for c in reversed(seq))
    chars = list(seq)
    for pos in rng.integers(0, len(chars), size=6):
        chars[pos] = "ACGTN"[rng.integers(5)]
    onehot = np.array([ONEHOT[c] for c in chars], np.float32)
    kmers = np.zeros(N_KMER, np.float32)
    for size in KMER_SIZES:
        for i in range(len(chars) - size + 1):
            idx = KMER_INDEX.get("".join(chars[i : i + size]))
            if idx is not None:
                kmers[idx] += 1.0
    gc = (chars.count("G") + chars.count("C")) / len(chars)
    cpg = sum(1 for i in range(len(chars) - 1) if chars[i] == "C" and chars[i + 1] == "G")
    extra = np.array([gc, cpg / 50.0], np.float32)
    return onehot, np.concatenate([kmers / len(chars), extra])


def batch_generator(chrom, promoters, seed):
    rng = np.random.default_rng(seed)
    while True:
        xs, fs, ys = [], [], []
        for _ in range(BATCH):
            if rng.random() < 0.5:
                s = int(promoters[rng.integers(len(promoters))]) + int(rng.integers(-50, 50))
                s = max(0, s)
                label = 1.0
            else:
                s = int(rng.integers(0, len(chrom) - WINDOW))
                label = 0.0
            x, f = encode_window(chrom[s : s + WINDOW], rng)
            xs.append(x)
            fs.append(f)
            ys.append(label)
        yield (np.stack(xs), np.stack(fs)), np.array(ys, np.float32)


def build_model():
    seq_in = keras.Input((WINDOW, 4), name="onehot")
    feat_in = keras.Input((N_KMER + 2,), name="kmer")
    h = keras.layers.Conv1D(64, 15, padding="same", activation="relu")(seq_in)
    h = keras.layers.MaxPooling1D(4)(h)
    h = keras.layers.Conv1D(96, 9, padding="same", activation="relu")(h)
    h = keras.layers.MaxPooling1D(4)(h)
    h = keras.layers.Conv1D(128, 5, padding="same", activation="relu")(h)
    h = keras.layers.GlobalMaxPooling1D()(h)
    f = keras.layers.Dense(64, activation="relu")(feat_in)
    h = keras.layers.Concatenate()([h, f])
    h = keras.layers.Dense(128, activation="relu")(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    model = keras.Model([seq_in, feat_in], out)
    model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
    return model


class Timing(keras.callbacks.Callback):
    def __init__(self, warmup=5):
        super().__init__()
        self.warmup = warmup
        self.n = 0
        self.start = None
        self.end = None

    def on_train_batch_end(self, batch, logs=None):
        self.n += 1
        if self.n == self.warmup:
            self.start = time.perf_counter()
        self.end = time.perf_counter()

    def seconds_per_step(self):
        return (self.end - self.start) / (self.n - self.warmup)


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    chrom, promoters = make_chromosome(rng)
    print(f"chromosome {len(chrom) / 1e6:.1f} Mb, {len(promoters)} promoters")

    model = build_model()
    timing = Timing()
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=3)
    model.fit(
        batch_generator(chrom, promoters, 1),
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=EPOCHS,
        callbacks=[stop, timing],
        verbose=2,
    )
    full = timing.seconds_per_step()
    write_result({"steps_per_second": 1.0 / full})
    print(f"{1.0 / full:.2f} steps/s over {timing.n - timing.warmup} steps")

    if args.truth:
        (xb, fb), yb = next(batch_generator(chrom, promoters, 2))
        one = tf.data.Dataset.from_tensors(((xb, fb), yb)).repeat()
        model = build_model()
        timing = Timing()
        model.fit(
            one,
            steps_per_epoch=STEPS_PER_EPOCH,
            epochs=EPOCHS,
            callbacks=[keras.callbacks.EarlyStopping(monitor="loss", patience=3), timing],
            verbose=0,
        )
        compute = timing.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        write_result({"truth_input_fraction": frac})
        print(f"truth input fraction {frac:.3f} (full {full:.4f}s, cached {compute:.4f}s per step)")


if __name__ == "__main__":
    main()
