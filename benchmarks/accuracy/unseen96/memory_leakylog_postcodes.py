"""Postcode-district parcel volumes -> next-day volume forecaster.

Input path: in-memory NumPy features per postcode district (last 8 weeks of parcel
counts, weekday, depot load) via tf.data.from_tensor_slices to model.fit. A "diagnostics"
callback keeps, after every batch, a full copy of the model weights plus a float64 copy
of the batch-level per-district forecast table in a Python list that is never freed.
Known bottleneck: host memory growing through the run (memory-bound).
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
import resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_DISTRICTS = 12000
BATCH = 768
STEPS = 60
EPOCHS = 4
FEAT = 64
DIAG_HISTORY = []     # grows for the whole process, never cleared


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class StepTimer(keras.callbacks.Callback):
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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


class DiagnosticsLog(keras.callbacks.Callback):
    """Keeps every batch's weights and forecast table 'for later inspection'."""

    def __init__(self, table):
        super().__init__()
        self.table = table
        self.rss = []

    def on_train_batch_end(self, batch, logs=None):
        snap = [w.copy() for w in self.model.get_weights()]
        snap.append(np.repeat(self.table[batch % len(self.table)][None, :], 8, axis=0).astype(np.float64))
        DIAG_HISTORY.append(snap)

    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(rss_mib())


def make_districts():
    rng = np.random.default_rng(96)
    base = rng.gamma(3.0, 200.0, (N_DISTRICTS, 1))
    weekly = base * (1 + 0.3 * np.sin(np.arange(56)[None, :] * 2 * np.pi / 7)) + rng.normal(0, 20, (N_DISTRICTS, 56))
    extra = rng.normal(0, 1, (N_DISTRICTS, FEAT - 56))
    x = np.concatenate([weekly / 1000.0, extra], axis=1).astype(np.float32)
    y = (weekly[:, -7:].mean(axis=1, keepdims=True) / 1000.0).astype(np.float32)
    return x, y


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(1024, activation="relu")(inp)
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    out = keras.layers.Dense(1)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


X, Y = make_districts()
FORECAST_TABLE = np.random.default_rng(7).random((16, N_DISTRICTS * 4)).astype(np.float32)


def run(ds):
    model = build_model()
    timer = StepTimer()
    diag = DiagnosticsLog(FORECAST_TABLE)
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, diag], verbose=0)
    return timer.seconds_per_step(), diag


full_ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N_DISTRICTS, seed=96).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full, diag = run(full_ds)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
emit({"steps_per_second": 1.0 / full})
print(f"postcodes: {full*1000:.1f} ms/step, RSS per epoch {[round(r) for r in diag.rss]} MiB, peak {peak:.0f} MiB, "
      f"{len(DIAG_HISTORY)} snapshots kept, wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    batch = next(iter(full_ds))
    compute, diag2 = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"postcodes truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}, "
          f"RSS per epoch {[round(r) for r in diag2.rss]} MiB")
