import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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

    def seconds_per_step(self):
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Greenhouse climate computers export one JSON document per bay and day with
# nested hourly readings. A Python loop json.loads each record, flattens and
# normalises it, and feeds a custom GradientTape training step.
BATCH = 64
STEPS = 850
N_REC = 2048
HOURS = 24
SENSORS = ["temp", "rh", "co2", "par"]
CLASSES = 3  # botrytis risk

rng = np.random.default_rng(78)
LABELS = rng.integers(CLASSES, size=N_REC).astype(np.int32)
DOCS = []
for i in range(N_REC):
    hours = [{"h": h, **{s: round(float(rng.normal(20 + LABELS[i], 3)), 3) for s in SENSORS},
              "vents": {"roof": int(rng.integers(0, 100)), "side": int(rng.integers(0, 100))}}
             for h in range(HOURS)]
    DOCS.append(json.dumps({"bay": f"B{i % 30}", "crop": "tomato", "date": f"2026-04-{1 + i % 28:02d}",
                            "hourly": hours}))
FEAT = HOURS * (len(SENSORS) + 2)


def parse(doc):
    d = json.loads(doc)
    row = []
    for hr in d["hourly"]:
        row.extend(hr[s] for s in SENSORS)
        row.append(hr["vents"]["roof"] / 100.0)
        row.append(hr["vents"]["side"] / 100.0)
    x = np.asarray(row, np.float32)
    return (x - x.mean()) / (x.std() + 1e-6)


def python_batches(seed):
    r = np.random.default_rng(seed)
    while True:
        ids = r.integers(0, N_REC, BATCH)
        x = np.stack([parse(DOCS[i]) for i in ids])
        yield x, LABELS[ids]


def build():
    return keras.Sequential([keras.Input((FEAT,)),
                             keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(CLASSES)])


def run(batches):
    keras.utils.set_random_seed(78)
    model = build()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    for _ in range(STEPS):
        x, y = next(batches)
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    gaps = np.diff(stamps)[5:]
    return float(np.mean(gaps))


full = run(python_batches(1))
emit({"steps_per_second": 1.0 / full})
print(f"[input_tapejson_greenhouse] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    xb, yb = next(python_batches(2))

    def same():
        while True:
            yield xb, yb
    comp = run(same())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[input_tapejson_greenhouse] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
