import time; T0 = time.perf_counter()
"""Sofa delivery route duration predictor trained with model.train_on_batch.

Each training example is one two-person delivery van run from the regional
warehouse: 10-20 drops of sofas, armchairs and corner units with customer
time windows.  For every batch a Python loop builds the runs, computes the
haversine distance matrix, a nearest-neighbour tour, stair/lift handling time
and the per-drop features, and then calls model.train_on_batch.
Bottleneck: pure-Python route feature engineering per batch (input-bound).
"""
import os, sys, json, math
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

MAX_DROPS = 24
PER_DROP = 5
FEATS = MAX_DROPS * PER_DROP + 4
BATCH = 32
STEPS = 1000
DEPOT = (53.4808, -2.2426)   # warehouse


def haversine(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def one_run(rng):
    n = int(rng.integers(12, MAX_DROPS + 1))
    drops = [(DEPOT[0] + rng.normal(0, 0.15), DEPOT[1] + rng.normal(0, 0.25)) for _ in range(n)]
    pts = [DEPOT] + drops
    dist = [[haversine(p, q) for q in pts] for p in pts]
    seen, cur, tour_km, order = {0}, 0, 0.0, []
    while len(seen) < len(pts):
        nxt = min((j for j in range(len(pts)) if j not in seen), key=lambda j: dist[cur][j])
        tour_km += dist[cur][nxt]
        seen.add(nxt); order.append(nxt); cur = nxt
    tour_km += dist[cur][0]
    feats = [0.0] * FEATS
    handling = 0.0
    for k, j in enumerate(order):
        floor = int(rng.integers(0, 6))
        lift = rng.random() < 0.5
        seats = int(rng.integers(1, 6))
        h = 12 + 4 * seats + (0 if lift else 6 * floor)
        handling += h
        base = k * PER_DROP
        feats[base:base + PER_DROP] = [(pts[j][0] - DEPOT[0]) * 5, (pts[j][1] - DEPOT[1]) * 3,
                                       floor / 5.0, float(lift), seats / 5.0]
    feats[-4:] = [n / MAX_DROPS, tour_km / 100.0, handling / 300.0, sum(map(sum, dist)) / 5000.0]
    minutes = tour_km / 0.45 + handling + rng.normal(0, 10)
    return feats, minutes / 300.0


def next_batch(rng):
    rows = [one_run(rng) for _ in range(BATCH)]
    return (np.array([r[0] for r in rows], np.float32), np.array([[r[1]] for r in rows], np.float32))


def build_model():
    inp = keras.Input((FEATS,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x))
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


def train(batch_source):
    keras.utils.set_random_seed(86)
    model = build_model()
    stamps = []
    for step in range(STEPS):
        x, y = batch_source()
        loss = float(model.train_on_batch(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def main():
    rng = np.random.default_rng(86)
    full, loss = train(lambda: next_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    msg = f"[sofaroute] full {full*1000:.1f} ms/step loss {loss:.4f}"
    if TRUTH:
        fx, fy = next_batch(np.random.default_rng(87))
        compute, _ = train(lambda: (fx, fy))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f" compute {compute*1000:.1f} ms/step truth_input_fraction {frac:.3f}"
    print(msg + f" wall {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
