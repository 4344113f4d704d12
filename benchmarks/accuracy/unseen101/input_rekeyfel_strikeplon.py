import time; T0 = time.perf_counter()
"""Rekeying-job estimator trained with a model.train_on_batch loop.

Each iteration the loop builds a batch in Python: a random master-keyed door
set is generated, its pin chambers are rekeyed (change key + master wafers) and
per-door features (wafer counts, shear-line ambiguity, job minutes) are derived.
"""
import os, sys, json, math, random
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1016
BATCH = 128
STEPS = 700
CHAMBERS = 6
DEPTHS = 10
FEATS = CHAMBERS * 6 + 2


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def rekey_door(rng):
    change = [rng.randrange(DEPTHS) for _ in range(CHAMBERS)]
    master = [rng.randrange(DEPTHS) for _ in range(CHAMBERS)]
    feats, minutes = [], 4.0
    for c in range(CHAMBERS):
        bottom = min(change[c], master[c])
        wafer = abs(change[c] - master[c])
        shear = [bottom, bottom + wafer]
        ambiguity = 0.0
        for probe in range(DEPTHS * 3):
            depth = probe / 3.0
            ambiguity += sum(math.exp(-(depth - s) ** 2) for s in shear) * 0.01
        minutes += 0.6 + 0.3 * (wafer > 0) + 0.02 * ambiguity
        feats += [change[c] / 9, master[c] / 9, bottom / 9, wafer / 9, ambiguity, float(wafer > 0)]
    feats += [sum(change) / 54.0, sum(master) / 54.0]
    return feats, minutes + rng.gauss(0, 0.3)


def build_batch(rng):
    xs, ys = [], []
    for _ in range(BATCH):
        f, m = rekey_door(rng)
        xs.append(f)
        ys.append(m)
    return np.asarray(xs, np.float32), np.asarray(ys, np.float32)[:, None]


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(768, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def run(fixed_batch=None):
    model = build_model()
    rng = random.Random(SEED)
    stamps = []
    for step in range(STEPS):
        if fixed_batch is None:
            x, y = build_batch(rng)
        else:
            x, y = fixed_batch
        loss = float(model.train_on_batch(x, y, return_dict=True)["loss"])
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(gaps.mean()), loss


full, loss = run()
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"input_rekeyfel_strikeplon: {1.0/full:.2f} steps/s, loss {loss:.3f}, wall {wall:.1f}s"

if TRUTH:
    batch = build_batch(random.Random(SEED + 1))
    compute, _ = run(fixed_batch=batch)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
