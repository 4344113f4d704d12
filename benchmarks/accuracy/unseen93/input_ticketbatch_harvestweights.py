import time; T0 = time.perf_counter()
"""Harvest weight tickets: each well-boat delivery produces fixed-width
weight tickets (one line per fish from the grading scale). A Python loop
parses the tickets, bins the weights into a size histogram per delivery and
calls model.train_on_batch to predict the downgrade share (superior vs.
ordinary quality) of the delivery."""
import os, sys, json, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

def seconds_per_step(stamps):
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    g = gaps[5:] if len(gaps) > 5 else gaps
    return sum(g) / len(g)

BATCH = 32
STEPS = 750
FISH = 140             # fish per ticket sample
BINS = 64
NFEAT = BINS * 3

def ticket(rng, delivery):
    mean_kg = rng.uniform(3.5, 6.5)
    lines = []
    for k in range(FISH):
        w = max(0.8, rng.gauss(mean_kg, 0.9))
        grade = "SUP" if rng.random() > 0.15 else ("ORD" if rng.random() > 0.3 else "PRD")
        lines.append(f"{delivery:08d}{k:05d}{'LERØY-BOAT7':<12}{w*1000:08.1f}{grade:<4}{rng.randint(0,9)}")
    return "\n".join(lines)

def features(text):
    w_bins = [0.0] * BINS; sup = [0.0] * BINS; gut = [0.0] * BINS
    n_down = 0; n = 0
    for ln in text.split("\n"):
        grams = float(ln[25:33]); grade = ln[33:37].strip(); gutflag = int(ln[37])
        b = min(BINS - 1, int(grams / 10000.0 * BINS))
        w_bins[b] += 1.0
        if grade == "SUP":
            sup[b] += 1.0
        else:
            n_down += 1
        gut[b] += gutflag / 9.0
        n += 1
    return [v / n for v in w_bins + sup + gut], n_down / n

def make_batch(rng, step):
    xs, ys = [], []
    for j in range(BATCH):
        f, y = features(ticket(rng, step * BATCH + j))
        xs.append(f); ys.append(y)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m

def train(fixed=None):
    model = build_model()
    rng = random.Random(93)
    stamps = []
    for i in range(STEPS):
        x, y = fixed if fixed is not None else make_batch(rng, i)
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return seconds_per_step(stamps), loss

full, loss = train()
emit({"steps_per_second": 1.0 / full})
print(f"[harvestweights] train_on_batch loop: {full*1000:.2f} ms/step, loss {loss:.4f}, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    fixed = make_batch(random.Random(7), 0)
    compute, _ = train(fixed)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[harvestweights] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}")
