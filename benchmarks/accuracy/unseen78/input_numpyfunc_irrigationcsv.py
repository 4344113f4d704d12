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

# Nursery irrigation logs: each bench controller writes a semicolon/comma text
# line of soil-moisture readings. tf.data maps tf.numpy_function over batches of
# raw lines; Python splits, converts and smooths them before model.fit.
BATCH = 64
STEPS = 150
EPOCHS = 3
N_LINES = 4096
N_READ = 1024
CLASSES = 4  # irrigation action

rng = np.random.default_rng(78)
LABELS = rng.integers(CLASSES, size=N_LINES).astype(np.int32)
LINES = []
for i in range(N_LINES):
    vals = rng.normal(30 + 5 * LABELS[i], 4, N_READ)
    LINES.append(f"bench{i % 40:02d};zone{i % 7};2026-05-{1 + i % 28:02d}T06:00;" +
                 ",".join(f"{v:.3f}" for v in vals))
LINES = np.array(LINES)


def parse_lines(raw):
    out = np.empty((len(raw), N_READ + 2), np.float32)
    for j, line in enumerate(raw):
        bench, zone, stamp, csv = line.decode().split(";")
        v = np.array([float(t) for t in csv.split(",")], np.float32)
        v = np.convolve(v, np.ones(5, np.float32) / 5, mode="same")
        out[j, :N_READ] = (v - 30.0) / 10.0
        out[j, N_READ] = int(zone[4:]) / 7.0
        out[j, N_READ + 1] = int(stamp[11:13]) / 24.0
    return out


def full_ds():
    ds = tf.data.Dataset.from_tensor_slices((LINES, LABELS)).shuffle(N_LINES, seed=78).repeat().batch(BATCH)

    def m(lines, y):
        x = tf.numpy_function(parse_lines, [lines], tf.float32)
        x.set_shape((None, N_READ + 2))
        return x, y
    return ds.map(m)


def build():
    m = keras.Sequential([keras.Input((N_READ + 2,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


full = run(full_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[input_numpyfunc_irrigationcsv] full {full*1000:.1f} ms/step, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(full_ds()))
    comp = run(tf.data.Dataset.from_tensors(batch).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[input_numpyfunc_irrigationcsv] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
