"""Autosomal DNA match lists -> predicted genealogical relationship.

Input path: a plain Python loop.  For every match pair the loop simulates the
shared IBD segments (chromosome, start/end cM) and summarises them in Python:
total/longest shared cM, segment counts over thresholds, per-chromosome
coverage (0.5-cM track) after merging overlapping segments.  Each batch is handed to a custom
@tf.function GradientTape train step.  Expected bottleneck: input.
"""
import time; T0 = time.perf_counter()
import os, sys, json, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS = 64, 500
CHROM_CM = [284, 269, 223, 214, 204, 192, 187, 168, 166, 181, 159, 173,
            127, 117, 131, 135, 129, 128, 109, 112, 64, 71]
# expected shared cM (approx. Shared cM Project means) for each relationship class
RELATIONS = [("parent/child", 3485), ("full sibling", 2613), ("grandparent/half-sib", 1750),
             ("first cousin", 866), ("1C1R", 433), ("second cousin", 229),
             ("2C1R", 122), ("third cousin", 73), ("distant", 30)]
NFEAT = 8 + 22 * 3


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def simulate_segments(rng, target_cm):
    segs, total = [], 0.0
    while total < target_cm * rng.uniform(0.7, 1.3):
        ch = rng.randrange(22)
        length = min(CHROM_CM[ch], rng.expovariate(1.0 / max(8.0, target_cm / 25.0)) + 3.0)
        start = rng.uniform(0, CHROM_CM[ch] - length)
        segs.append((ch, start, start + length))
        total += length
    for _ in range(rng.randint(0, 6)):              # false-positive small segments
        ch = rng.randrange(22)
        s = rng.uniform(0, CHROM_CM[ch] - 5)
        segs.append((ch, s, s + rng.uniform(1.0, 5.0)))
    return segs


def summarise(segs):
    by_chrom = [[] for _ in range(22)]
    for ch, s, e in segs:
        by_chrom[ch].append((s, e))
    cover, nseg, longest = [0.0] * 22, [0] * 22, [0.0] * 22
    for ch in range(22):
        merged = []
        for s, e in sorted(by_chrom[ch]):
            if merged and s <= merged[-1][1] + 0.5:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        lens = [e - s for s, e in merged if e - s >= 7.0]
        track = [0] * (2 * CHROM_CM[ch])            # 0.5-cM resolution coverage track
        for s, e in merged:
            for b in range(int(2 * s), min(int(2 * e) + 1, 2 * CHROM_CM[ch])):
                track[b] += 1
        runs, run = 0, 0
        for b in track:                             # count runs of >= 7 covered cM
            if b:
                run += 1
            else:
                runs += run >= 14
                run = 0
        runs += run >= 14
        cover[ch] = sum(1 for b in track if b) / (2 * CHROM_CM[ch]) + 0.01 * runs
        nseg[ch] = len(lens) / 5.0
        longest[ch] = (max(lens) if lens else 0.0) / CHROM_CM[ch]
    lengths = sorted((e - s for _, s, e in segs), reverse=True)
    kept = [x for x in lengths if x >= 7.0]
    total = sum(kept)
    glob = [total / 3500.0, (kept[0] if kept else 0.0) / 284.0, len(kept) / 60.0,
            sum(1 for x in kept if x >= 20) / 40.0, sum(1 for x in kept if x >= 50) / 20.0,
            sum(lengths[:5]) / 1000.0, len(lengths) / 80.0, sum(1 for c in cover if c > 0) / 22.0]
    return glob + cover + nseg + longest


def match_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        rel = rng.randrange(len(RELATIONS))
        xs.append(summarise(simulate_segments(rng, RELATIONS[rel][1])))
        ys.append(rel)
    return np.array(xs, np.float32), np.array(ys, np.int32)


def build_model():
    return keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(len(RELATIONS)),
    ])


def train(next_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, loss = [], None
    for step in range(STEPS):
        x, y = next_batch()
        loss = float(train_step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)
    return float(np.mean(gaps[5:])), loss


keras.utils.set_random_seed(81)
rng = random.Random(81)
full, last_loss = train(lambda: match_batch(rng))
emit({"steps_per_second": 1.0 / full})
print("dnasegments: %.1f ms/step, final loss %.3f, wall so far %.1f s" % (full * 1e3, last_loss, time.perf_counter() - T0))
if TRUTH:
    fixed = match_batch(random.Random(82))
    compute, _ = train(lambda: fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("dnasegments truth: full %.1f ms, compute %.1f ms, input fraction %.3f" % (full * 1e3, compute * 1e3, frac))
