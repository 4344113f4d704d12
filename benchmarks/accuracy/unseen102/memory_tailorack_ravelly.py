import time; T0 = time.perf_counter()
"""Hem-length regressor whose author keeps "history" of every weight state.

A debugging callback appends a copy of model.get_weights() after every
batch to a module-level list that is never cleared, so resident memory
climbs steadily through training.
"""
import json
import os
import resource
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEED = 10211
BATCH = 768
STEPS = 300
EPOCHS = 4
N_FEAT = 36

WEIGHT_HISTORY = []  # never freed


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024 ** 2
    return 0.0


def peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


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


class KeepEveryWeightState(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        WEIGHT_HISTORY.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: {len(WEIGHT_HISTORY)} weight states kept, RSS {rss_gib():.2f} GiB", flush=True)


rng = np.random.default_rng(SEED)
x = rng.normal(size=(BATCH * STEPS, N_FEAT)).astype(np.float32)
hem = (x[:, 0] * 2.0 + x[:, 1] - 0.5 * x[:, 2] + 60.0).astype(np.float32)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


model = make_model()
timer = StepTimer()
t = time.perf_counter()
model.fit(x, hem, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, KeepEveryWeightState()], verbose=0)
full = timer.sec_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"memory_tailorack_ravelly: {1.0 / full:.1f} steps/s, fit {time.perf_counter() - t:.1f}s, "
      f"{len(WEIGHT_HISTORY)} states, RSS {rss_gib():.2f} GiB, peak {peak_gib():.2f} GiB, "
      f"wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = (x[:BATCH], hem[:BATCH])
    model = make_model()
    timer = StepTimer()
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS,
              callbacks=[timer, KeepEveryWeightState()], verbose=0)
    compute = timer.sec_per_step()
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}, RSS now {rss_gib():.2f} GiB, peak {peak_gib():.2f} GiB")
