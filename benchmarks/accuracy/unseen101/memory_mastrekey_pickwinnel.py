import time; T0 = time.perf_counter()
"""Master-key system planner whose debugging callback hoards weight snapshots.

A callback appends a copy of model.get_weights() after every batch to a
module-level history list that is never cleared, so resident memory grows
steadily through training.
"""
import os, sys, json, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1021
BATCH = 1024
N = 1024 * 80
EPOCHS = 5
FEATS = 256
N_LEVELS = 4          # grand master / master / sub-master / change key

WEIGHT_HISTORY = []   # every snapshot ever taken; nothing removes them


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


def rss_gib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    return 0.0


def peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class WeightHoarder(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        WEIGHT_HISTORY.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: {len(WEIGHT_HISTORY)} snapshots, rss {rss_gib():.2f} GiB")


rs = np.random.RandomState(SEED)
x = rs.normal(0, 1, (N, FEATS)).astype(np.float32)
y = np.clip((x[:, :4] > 0.3).sum(axis=1), 0, N_LEVELS - 1).astype(np.int32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_LEVELS),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


model = build_model()
timer = StepTimer()
model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, WeightHoarder()], verbose=0)
full = timer.sec_per_step()
wall = time.perf_counter() - T0
plain_peak = peak_gib()
emit({"steps_per_second": 1.0 / full})
msg = (f"memory_mastrekey_pickwinnel: {1.0/full:.2f} steps/s, {len(WEIGHT_HISTORY)} snapshots, "
       f"rss {rss_gib():.2f} GiB, peak {plain_peak:.2f} GiB, wall {wall:.1f}s")

if TRUTH:
    batch = (x[:BATCH], y[:BATCH])
    model = build_model()
    timer = StepTimer()
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
              steps_per_epoch=N // BATCH, callbacks=[timer, WeightHoarder()], verbose=0)
    compute = timer.sec_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += (f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}, "
            f"peak after truth run {peak_gib():.2f} GiB")
print(msg)
