import time; T0 = time.perf_counter()
"""Fabric-grade regressor for bolts of cloth.

Each bolt's weave scan (thread counts per warp/weft band) sits in memory;
from_tensor_slices -> serial map(tf.numpy_function) runs a Python
shrinkage/drape estimate per bolt before batching into model.fit.
"""
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEED = 10203
BATCH = 64
N_BOLTS = 64 * 330
EPOCHS = 2
N_BANDS = 40
DRAPE_PASSES = 16


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


rng = np.random.default_rng(SEED)
weave = rng.normal(30.0, 6.0, size=(N_BOLTS, N_BANDS)).astype(np.float32)   # threads/cm
grade = (weave[:, :8].mean(axis=1) / 30.0 + 0.1 * rng.normal(size=N_BOLTS)).astype(np.float32)


def drape_estimate(scan):
    """Python shrinkage/drape walk over the thread-count bands of one bolt."""
    vals = scan.tolist()
    out = [0.0] * N_BANDS
    for p in range(DRAPE_PASSES):
        for j in range(N_BANDS):
            v = vals[j]
            out[j] += math.log1p(v * (1.0 + 0.02 * p)) * math.sin(0.05 * v + p) / DRAPE_PASSES
    out[0] = (sum(vals[:8]) / 8.0 - 30.0) / 6.0
    return np.asarray(out, dtype=np.float32)


def to_features(scan, y):
    feats = tf.numpy_function(drape_estimate, [scan], tf.float32)
    feats.set_shape((N_BANDS,))
    return feats, y


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_BANDS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def train(data, **kw):
    model = make_model()
    timer = StepTimer()
    t = time.perf_counter()
    hist = model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.sec_per_step(), time.perf_counter() - t, hist.history["loss"][-1]


ds = (tf.data.Dataset.from_tensor_slices((weave, grade))
      .map(to_features)
      .batch(BATCH, drop_remainder=True)
      .prefetch(2))
full, fit_wall, loss = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"input_dartlow_pleatish: {1.0 / full:.1f} steps/s, fit {fit_wall:.1f}s, "
      f"loss {loss:.3f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    xb = np.stack([drape_estimate(weave[i]) for i in range(BATCH)])
    batch = (xb, grade[:BATCH])
    compute, _, _ = train(tf.data.Dataset.from_tensors(batch).repeat(),
                          steps_per_epoch=N_BOLTS // BATCH)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
