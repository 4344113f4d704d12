"""Nail-polish viscometer readings -> application class (too thin / brushable / gloopy).

Rotational-viscometer sweeps (48 shear rates x viscosity, torque,
temperature) of nail-polish lacquers are held in memory.  For a later
loss-landscape plot the training script keeps a copy of every layer's
weights after every batch in a Python list that is never trimmed, so host
memory grows steadily through the run.
"""
import time; T0 = time.perf_counter()
import os, sys, json, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


WEIGHT_TRAIL = []  # every snapshot ever taken; never cleared


class WeightTrail(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        WEIGHT_TRAIL.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        mb = sum(w.nbytes for snap in WEIGHT_TRAIL for w in snap) / 2**20
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
        print(f"[viscometer] epoch {epoch}: {len(WEIGHT_TRAIL)} snapshots, {mb:.0f} MiB kept, peak RSS {rss:.0f} MiB")


BATCH, STEPS, EPOCHS, RATES = 1024, 100, 3, 48


def make_sweeps(n, seed=88):
    rng = np.random.default_rng(seed)
    shear = np.logspace(-1, 3, RATES, dtype=np.float32)
    cls = rng.integers(0, 3, n).astype(np.int32)
    eta0 = np.array([0.3, 1.2, 4.0], np.float32)[cls] * rng.uniform(0.8, 1.25, n).astype(np.float32)
    n_idx = rng.uniform(0.5, 0.9, n).astype(np.float32)
    visc = eta0[:, None] * shear[None] ** (n_idx[:, None] - 1)
    temp = rng.normal(23, 1, (n, RATES)).astype(np.float32)
    torque = visc * shear[None] / 50
    x = np.stack([np.log(visc), np.log1p(torque), (temp - 23)], -1).reshape(n, -1)
    return x.astype(np.float32), cls


def build_model():
    keras.utils.set_random_seed(88)
    inp = keras.Input((RATES * 3,))
    h = layers.Dense(1024, activation="relu")(inp)
    h = layers.Dense(1024, activation="relu")(h)
    h = layers.Dense(512, activation="relu")(h)
    m = keras.Model(inp, layers.Dense(3)(h))
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, WeightTrail()], verbose=0)
    return timer.seconds_per_step()


X, Y = make_sweeps(8192)
ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(8192, seed=88).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
print(f"[viscometer] {1.0 / full:.2f} steps/s, {len(WEIGHT_TRAIL)} weight snapshots kept, peak RSS {rss:.0f} MiB, "
      f"wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    F = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": F})
    print(f"[viscometer] truth: full {full * 1000:.1f} ms, compute {compute * 1000:.1f} ms, input fraction {F:.3f}")
