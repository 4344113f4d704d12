"""Craft brewery recipe QA: predicts the tasting panel's bitterness class from
recipe documents.  Input path: a custom GradientTape loop fed from Python; each
batch json.loads() the recipe documents, computes Tinseth IBU per hop addition,
Morey SRM from the grain bill and original gravity, and pads the hop schedule.
Deliberate bottleneck: input (Python recipe parsing before every step)."""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()
import math

BATCH = 64
STEPS = 250
MAX_HOPS = 12
POOL = 600
HOPS = ["Cascade", "Citra", "Saaz", "Magnum", "Mosaic", "Fuggle", "Simcoe", "Hallertau"]


def make_recipes(seed=44):
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(POOL):
        grains = [{"name": f"malt{j}", "kg": round(float(rng.uniform(0.2, 5.0)), 3),
                   "ppg": round(float(rng.uniform(28, 38)), 1), "lovibond": round(float(rng.uniform(1.5, 350 if j == 0 else 40)), 1)}
                  for j in range(int(rng.integers(3, 9)))]
        hops = [{"variety": HOPS[int(rng.integers(0, len(HOPS)))], "grams": round(float(rng.uniform(5, 80)), 1),
                 "alpha": round(float(rng.uniform(3, 15)), 2), "minutes": int(rng.choice([90, 60, 30, 15, 5, 0])),
                 "use": "boil" if rng.random() < 0.85 else "dry hop"}
                for _ in range(int(rng.integers(2, MAX_HOPS + 1)))]
        docs.append(json.dumps({"id": f"R{i:05d}", "style": "IPA" if i % 3 else "Lager",
                                "batch_liters": round(float(rng.uniform(18, 25)), 1),
                                "efficiency": round(float(rng.uniform(0.65, 0.8)), 3),
                                "fermentables": grains, "hops": hops,
                                "notes": "mash 66C 60min; " * int(rng.integers(1, 6))}))
    return docs


def featurise(doc):
    r = json.loads(doc)
    liters = r["batch_liters"]; gal = liters / 3.785
    points = sum(g["kg"] * 2.2046 * g["ppg"] for g in r["fermentables"]) * r["efficiency"] / gal
    og = 1.0 + points / 1000.0
    mcu = sum(g["kg"] * 2.2046 * g["lovibond"] for g in r["fermentables"]) / gal
    srm = 1.4922 * mcu ** 0.6859
    sched = np.zeros((MAX_HOPS, 5), np.float32)
    ibu = 0.0
    for k, h in enumerate(r["hops"][:MAX_HOPS]):
        t = h["minutes"] if h["use"] == "boil" else 0
        # time-stepped isomerisation: integrate alpha-acid utilisation minute by minute,
        # with wort gravity rising as the boil concentrates the wort
        util = 0.0
        for minute in range(t):
            g = og + 0.00004 * minute
            util += 1.65 * 0.000125 ** (g - 1.0) * 0.04 * math.exp(-0.04 * (t - minute)) / 4.15
        contrib = util * (h["alpha"] / 100.0) * h["grams"] * 1000.0 / liters
        ibu += contrib
        sched[k] = (h["grams"] / 80.0, h["alpha"] / 15.0, t / 90.0, contrib / 50.0, HOPS.index(h["variety"]) / 8.0)
    tab = np.array([og - 1.0, srm / 40.0, ibu / 100.0, liters / 25.0, float(r["style"] == "IPA")], np.float32)
    label = 0 if ibu < 25 else (1 if ibu < 55 else 2)
    return np.concatenate([sched.ravel(), tab]), label


def python_batches(docs, seed):
    rng = np.random.default_rng(seed)
    while True:
        xs, ys = [], []
        for i in rng.integers(0, len(docs), BATCH):
            x, y = featurise(docs[int(i)])
            xs.append(x); ys.append(y)
        yield np.stack(xs), np.asarray(ys, np.int32)


def build_model():
    return keras.Sequential([keras.Input((MAX_HOPS * 5 + 5,)),
                             keras.layers.Dense(384, activation="relu"),
                             keras.layers.Dense(384, activation="relu"),
                             keras.layers.Dense(192, activation="relu"),
                             keras.layers.Dense(3)])


def train(batches):
    keras.utils.set_random_seed(4)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, last = [], None
    for _ in range(STEPS):
        x, y = next(batches)
        loss = float(step(x, y))
        now = time.perf_counter()
        if last is not None:
            gaps.append(now - last)
        last = now
    return sec_per_step(gaps), loss


def main():
    args = parse_args()
    docs = make_recipes()
    full, loss = train(python_batches(docs, seed=2))
    emit({"steps_per_second": 1.0 / full})
    print(f"[hopschedules] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, loss {loss:.3f}, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        xb, yb = next(python_batches(docs, seed=3))

        def same():
            while True:
                yield xb, yb
        compute, _ = train(same())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[hopschedules] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
