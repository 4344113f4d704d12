"""Aviation: remaining-useful-life (RUL) regression for turbofan engines.

Sliding windows of engine sensor snapshots (14 sensors x 30 cycles) train a small Conv1D
regressor for only a few steps per epoch, but a fleet-health callback runs
model.evaluate and model.predict over a large held-out fleet at every epoch end and computes RMSE and the
asymmetric PHM08 score in NumPy. That evaluation, not training, dominates the wall.
model.fit.
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
N_TRAIN = 4096
N_HOLDOUT = 140000
T = 30
F = 14
BATCH = 128
STEPS = 20
EPOCHS = 3


def make_windows(n, seed):
    rng = np.random.default_rng(seed)
    rul = rng.uniform(0, 200, n).astype(np.float32)
    wear = (1 - rul / 200.0)[:, None, None]
    t = np.linspace(0, 1, T, dtype=np.float32)[None, :, None]
    x = (rng.standard_normal((n, T, F), dtype=np.float32) * 0.3 + wear * (1 + t) * np.linspace(0.5, 2, F)[None, None]).astype(np.float32)
    return x, (rul / 100.0)[:, None]


XTR, YTR = make_windows(N_TRAIN, 57)
XHO, YHO = make_windows(N_HOLDOUT, 58)


class FleetHealthReport(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        ho_loss = self.model.evaluate(XHO, YHO, batch_size=512, verbose=0)
        pred = self.model.predict(XHO, batch_size=512, verbose=0)
        d = (pred - YHO)[:, 0] * 100.0
        rmse = float(np.sqrt(np.mean(d ** 2)))
        score = float(np.sum(np.where(d < 0, np.exp(-d / 13.0) - 1, np.exp(d / 10.0) - 1)))
        self.seconds += time.perf_counter() - t
        print(f"  epoch {epoch}: holdout loss {ho_loss:.4f}, RMSE {rmse:.1f} cycles, PHM score {score:.3g}")


def build_model():
    m = keras.Sequential([
        keras.Input((T, F)),
        keras.layers.Conv1D(32, 5, padding="same", activation="relu"),
        keras.layers.Conv1D(32, 5, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m


def train(ds):
    model = build_model()
    timer, report = StepTimer(), FleetHealthReport()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, report], verbose=0)
    return sec_per_step(timer.gaps), report.seconds


ds = tf.data.Dataset.from_tensor_slices((XTR, YTR)).shuffle(N_TRAIN, seed=1).repeat().batch(BATCH)
full, ev = train(ds)
wall = time.perf_counter() - _T0
emit({"steps_per_second": 1.0 / full})
print(f"eval_predictcallback_aircraft_engine_rul: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, "
      f"evaluation {ev:.1f} s = {100*ev/wall:.0f}% of wall {wall:.1f} s")
if ARGS.truth:
    batch = next(iter(ds))
    compute, ev2 = train(tf.data.Dataset.from_tensors(batch).repeat())
    wall = time.perf_counter() - _T0
    print(f"truth run evaluation {ev2:.1f} s; both runs: evaluation {ev+ev2:.1f} s = {100*(ev+ev2)/wall:.0f}% of wall {wall:.1f} s")
    finish_truth(full, compute)
