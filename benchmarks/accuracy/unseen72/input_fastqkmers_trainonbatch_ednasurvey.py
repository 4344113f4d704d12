"""Marine eDNA metabarcoding: assign 12S reads to fish families.

Input path: model.train_on_batch fed from Python; each step parses raw FASTQ records,
decodes Phred+33 qualities, trims the low-quality 3' tail, drops reads with ambiguous bases
and counts overlapping 4-mers into a normalised 256-dim profile.
"""
import json, os, sys, time

T0 = time.perf_counter()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS = 48, 500
N_FAM, READ_LEN, N_READS = 10, 120, 4000
KMER = {}
for i in range(256):
    KMER["".join("ACGT"[(i >> s) & 3] for s in (6, 4, 2, 0))] = i


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def make_fastq(rng):
    refs = rng.integers(0, 4, (N_FAM, READ_LEN + 20))
    recs, labels = [], []
    for i in range(N_READS):
        fam = int(rng.integers(0, N_FAM))
        off = int(rng.integers(0, 20))
        seq = refs[fam, off:off + READ_LEN].copy()
        mut = rng.random(READ_LEN) < 0.06
        seq[mut] = rng.integers(0, 4, mut.sum())
        s = "".join("ACGT"[b] for b in seq)
        if rng.random() < 0.05:
            p = int(rng.integers(0, READ_LEN))
            s = s[:p] + "N" + s[p + 1:]
        q = np.clip(38 - np.linspace(0, 18, READ_LEN) + rng.normal(0, 3, READ_LEN), 2, 41).astype(int)
        recs.append(f"@M05123:72:000000000-U72:1:{i}:{off} 1:N:0:1\n{s}\n+\n{''.join(chr(v + 33) for v in q)}")
        labels.append(fam)
    return recs, np.asarray(labels, np.int32)


def parse(record):
    head, seq, plus, qual = record.split("\n")
    q = [ord(c) - 33 for c in qual]
    end = len(q)
    while end > 40 and sum(q[end - 5:end]) / 5 < 20:
        end -= 1
    seq = seq[:end]
    prof = [0.0] * 256
    for j in range(len(seq) - 3):
        k = KMER.get(seq[j:j + 4])
        if k is not None:
            prof[k] += 1.0
    tot = sum(prof) or 1.0
    return [v / tot * 16 for v in prof]


def make_model():
    m = keras.Sequential([
        keras.Input((256,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(N_FAM),
    ])
    m.compile(keras.optimizers.Adam(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(batch_fn):
    keras.utils.set_random_seed(7)
    model = make_model()
    stamps = []
    for i in range(STEPS):
        x, y = batch_fn(i)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    recs, labels = make_fastq(np.random.default_rng(72))
    order = np.random.default_rng(1).integers(0, N_READS, (STEPS, BATCH))

    def batch(i):
        return np.asarray([parse(recs[j]) for j in order[i]], np.float32), labels[order[i]]

    full, loss = run(batch)
    emit({"steps_per_second": 1.0 / full})
    wall_normal = time.perf_counter() - T0
    line = f"fastqkmers: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step), loss {loss:.3f}"
    if TRUTH:
        fixed = batch(0)
        comp, _ = run(lambda i: fixed)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        line += f", compute-only {comp * 1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", normal-run wall {wall_normal:.1f}s, wall {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
