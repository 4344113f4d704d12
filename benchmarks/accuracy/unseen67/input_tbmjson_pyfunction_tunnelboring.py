"""Ground-class prediction for a tunnel boring machine from raw JSON ring logs (construction).

Input path: tf.data.Dataset.from_tensor_slices over JSON strings (one ring
segment of TBM PLC telemetry each); a tf.data map calls tf.py_function that
json-decodes the record, validates it, and computes thrust / torque /
penetration / cutter-wear statistics; feeds model.fit.
Known bottleneck: Python JSON decoding + feature code inside tf.py_function.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import math
import os
import random

import numpy as np
import tensorflow as tf
import keras

BATCH = 64
STEPS = 90
EPOCHS = 3
SAMPLES_PER_RING = 4
CUTTERS = 6
NFEAT = 48
NCLASS = 4  # clay, sand, weathered rock, hard rock


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_rings(seed=9, n=300):
    rng = random.Random(seed)
    rings, labels = [], []
    for i in range(n):
        cls = i % NCLASS
        samples = []
        for s in range(SAMPLES_PER_RING):
            samples.append({
                "t": "2026-02-%02dT%02d:%02d:%02d" % (1 + i % 28, s % 24, s % 60, (s * 7) % 60),
                "thrust_kN": round(9000 + cls * 3000 + rng.gauss(0, 500), 1),
                "torque_kNm": round(2000 + cls * 900 + rng.gauss(0, 200), 1),
                "rpm": round(1.5 + rng.random(), 3),
                "advance_mm_min": round(60 - cls * 12 + rng.gauss(0, 5), 2),
                "earth_pressure_bar": [round(1.8 - cls * 0.3 + rng.gauss(0, 0.1), 3) for _ in range(4)],
                "cutters": [{"id": c, "temp_C": round(30 + cls * 8 + rng.gauss(0, 3), 1),
                             "wear_mm": round(rng.random() * (1 + cls), 3)} for c in range(CUTTERS)],
                "alarms": rng.sample(["GRIPPER", "OIL_TEMP", "FOAM_LOW", "SCREW_JAM", "NONE"], 2),
            })
        rings.append(json.dumps({"ring": 1000 + i, "chainage_m": 1000 + i * 1.5,
                                 "operator": "shift-%d" % (i % 3), "samples": samples}))
        labels.append(cls)
    return rings, np.asarray(labels, np.int32)


def ring_features(raw):
    rec = json.loads(raw.numpy().decode())
    samples = rec["samples"]
    cols = {k: [s[k] for s in samples] for k in ("thrust_kN", "torque_kNm", "rpm", "advance_mm_min")}
    feat = []
    for k, v in cols.items():
        n = len(v)
        mu = sum(v) / n
        feat += [mu, math.sqrt(sum((a - mu) ** 2 for a in v) / n), min(v), max(v)]
    pen = [a / max(r, 1e-3) for a, r in zip(cols["advance_mm_min"], cols["rpm"])]
    fpi = [t / max(p, 1e-3) for t, p in zip(cols["thrust_kN"], pen)]
    feat += [sum(pen) / len(pen), sum(fpi) / len(fpi) / 1000.0]
    temps = [c["temp_C"] for s in samples for c in s["cutters"]]
    wear = [c["wear_mm"] for s in samples for c in s["cutters"]]
    feat += [sum(temps) / len(temps), max(temps), sum(wear) / len(wear), max(wear)]
    ep = [sum(s["earth_pressure_bar"]) / 4 for s in samples]
    feat += [sum(ep) / len(ep), max(ep) - min(ep)]
    alarms = {}
    for s in samples:
        for a in s["alarms"]:
            alarms[a] = alarms.get(a, 0) + 1
    feat += [alarms.get(a, 0) / len(samples) for a in ("GRIPPER", "OIL_TEMP", "FOAM_LOW", "SCREW_JAM")]
    feat += [0.0] * (NFEAT - len(feat))
    arr = np.asarray(feat[:NFEAT], np.float32)
    return arr / (np.abs(arr).max() + 1e-6)


def map_fn(raw, label):
    x = tf.py_function(ring_features, [raw], tf.float32)
    x.set_shape((NFEAT,))
    return x, label


def make_ds(rings, labels):
    ds = tf.data.Dataset.from_tensor_slices((rings, labels)).shuffle(len(rings), seed=2).repeat()
    return ds.map(map_fn).batch(BATCH)


def build_model():
    inp = keras.Input((NFEAT,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(NCLASS)(x))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rings, labels = make_rings()
    ds = make_ds(rings, labels)
    t = time.perf_counter()
    full = run(ds)
    print("[tbmjson] steps/s=%.2f sec/step=%.4f train_s=%.1f" % (1 / full, full, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        comp = run(fixed)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[tbmjson] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[tbmjson] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
