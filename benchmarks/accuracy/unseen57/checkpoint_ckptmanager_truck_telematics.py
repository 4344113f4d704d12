"""Automotive/logistics: predict fuel burn per trip segment from truck telematics (CAN bus).

An MLP over engineered CAN-bus trip features trains quickly, but a
tf.train.CheckpointManager saves model, optimizer and a 1.5M-truck x 48 per-vehicle baseline
table (about 290 MB) after every single training batch (max_to_keep=3) from one callback. The callback stamps the step time first, then
saves, then restarts the clock, so the per-step gaps never contain a save. Saving
dominates the wall. model.fit.
"""
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


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
N = 8192
F = 64
BATCH = 64
N_VEHICLES = 1_500_000  # per-truck baseline table kept in the checkpoint
STEPS = 20
EPOCHS = 3


def make_data():
    rng = np.random.default_rng(57)
    x = rng.standard_normal((N, F), dtype=np.float32)
    w = rng.standard_normal((F, 1)).astype(np.float32)
    y = (x @ w) * 0.1 + 0.05 * rng.standard_normal((N, 1)).astype(np.float32)
    return x, y


X, Y = make_data()


class TimedCheckpointEveryBatch(keras.callbacks.Callback):
    def __init__(self, directory):
        super().__init__()
        self.directory = directory
        self.gaps, self.last, self.save_seconds, self.saves = [], None, 0.0, 0
        self.manager = None

    def on_train_begin(self, logs=None):
        # per-vehicle fuel-burn baselines (48 stats per truck) travel with the training state
        self.vehicle_baseline = tf.Variable(tf.zeros((N_VEHICLES, 48)), trainable=False)
        ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer,
                                   vehicle_baseline=self.vehicle_baseline)
        self.manager = tf.train.CheckpointManager(ckpt, self.directory, max_to_keep=3)

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.manager.save()
        self.saves += 1
        self.last = time.perf_counter()
        self.save_seconds += self.last - now


def build_model():
    m = keras.Sequential([
        keras.Input((F,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m


def train(ds, directory):
    model = build_model()
    cb = TimedCheckpointEveryBatch(directory)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps), cb.save_seconds, cb.saves


tmp = tempfile.mkdtemp(prefix="u57_checkpoint_ckptmanager_truck_telematics_")
try:
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N, seed=1).repeat().batch(BATCH)
    full, sv, n = train(ds, os.path.join(tmp, "run"))
    wall = time.perf_counter() - _T0
    emit({"steps_per_second": 1.0 / full})
    print(f"checkpoint_ckptmanager_truck_telematics: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, "
          f"{n} saves {sv:.1f} s = {100*sv/wall:.0f}% of wall {wall:.1f} s")
    if ARGS.truth:
        batch = next(iter(ds))
        compute, sv2, n2 = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "truth"))
        wall = time.perf_counter() - _T0
        print(f"truth run saves {sv2:.1f} s; both runs: saves {sv+sv2:.1f} s = {100*(sv+sv2)/wall:.0f}% of wall {wall:.1f} s")
        finish_truth(full, compute)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
