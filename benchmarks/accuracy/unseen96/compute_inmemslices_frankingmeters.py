"""Franking-machine counter readings -> meter-fault classifier.

Input path: all counter histories are generated up front into NumPy arrays and fed via
tf.data.Dataset.from_tensor_slices(...).batch().prefetch() to model.fit.
Known bottleneck: the dense network itself (compute-bound); input is nearly free.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N = 16384
BATCH = 256
STEPS = 70
EPOCHS = 3
FEAT = 384          # 96 daily readings x 4 counters (ascending register, descending, pieces, rejects)
N_FAULTS = 8


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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


def make_meter_data():
    rng = np.random.default_rng(96)
    days = FEAT // 4
    pieces = rng.poisson(rng.uniform(20, 400, (N, 1)), (N, days)).astype(np.float32)
    postage = pieces * rng.choice([0.85, 1.35, 2.10], (N, days)).astype(np.float32)
    ascending = np.cumsum(postage, axis=1)
    descending = 50000.0 - ascending
    rejects = rng.poisson(0.02 * pieces).astype(np.float32)
    fault = rng.integers(0, N_FAULTS, N).astype(np.int32)
    rejects += (fault[:, None] == 3) * rng.poisson(3.0, (N, days))
    ascending += (fault[:, None] == 5) * rng.normal(0, 50.0, (N, days))
    x = np.concatenate([ascending / 5e4, descending / 5e4, pieces / 400.0, rejects / 10.0], axis=1)
    return x.astype(np.float32), fault


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(2048, activation="relu")(inp)
    h = keras.layers.Dense(2048, activation="relu")(h)
    h = keras.layers.Dense(1024, activation="relu")(h)
    out = keras.layers.Dense(N_FAULTS)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


X, Y = make_meter_data()


def make_dataset():
    return tf.data.Dataset.from_tensor_slices((X, Y)).batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE)


full = run(make_dataset())
emit({"steps_per_second": 1.0 / full})
print(f"frankingmeters: {full*1000:.1f} ms/step, {1.0/full:.2f} steps/s, wall so far {time.perf_counter()-T0:.1f} s")

if TRUTH:
    batch = next(iter(make_dataset()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"frankingmeters truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
