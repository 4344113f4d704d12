import time
WALL0 = time.perf_counter()
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Groundwater-head emulator with an ever-growing residual archive.

Aquifer grids (64x64 cells, 8 channels: recharge, pumping, conductivity,
previous heads...) are held in memory; a custom tf.GradientTape loop slices
batches and trains a small CNN that predicts next-step heads. For "later
residual analysis" the loop appends float64 copies of every input batch, its
prediction, target and residual field to a Python list that is never trimmed, so resident memory
grows by ~9 MB per step during training. Bottleneck: memory growth.
"""
SEED = 58
BATCH = 24
STEPS = 160
HW = 64
CH = 8

rng = np.random.default_rng(SEED)
X = rng.normal(0, 1, (320, HW, HW, CH)).astype(np.float32)
Y = (0.5 * X[..., :1] + 0.2 * X[..., 1:2]).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    return keras.Sequential([keras.Input((HW, HW, CH)),
                             keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
                             keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
                             keras.layers.Conv2D(1, 1)])


def run(get_batch):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean(tf.square(y - pred))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, pred

    archive = []  # grows without bound
    gaps, last = [], None
    for step in range(STEPS):
        x, y = get_batch(step)
        loss, pred = train_step(x, y)
        loss = float(loss)
        t = time.perf_counter()
        if last is not None:
            gaps.append(t - last)
        last = t
        p64 = np.array(pred, dtype=np.float64)
        y64 = np.array(y, dtype=np.float64)
        archive.append((np.array(x, dtype=np.float64), p64, y64, y64 - p64))
    mb = sum(sum(a.nbytes for a in rec) for rec in archive) / 2**20
    return sec_per_step(gaps), mb


def batch_at(i):
    s = (i * BATCH) % (len(X) - BATCH)
    return X[s:s + BATCH], Y[s:s + BATCH]


print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full, mb = run(batch_at)
emit({"steps_per_second": 1.0 / full})
print(f"memory_residualarchive_tapeloop_groundwaterheads: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, archive {mb:.0f} MiB, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    fixed = batch_at(0)
    compute, _ = run(lambda i: fixed)
    emit_truth(full, compute)
