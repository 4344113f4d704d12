import time; T0 = time.perf_counter()
import json
import os
import sys
import tempfile
import shutil

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
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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
        g = self.gaps[5:]
        return sum(g) / len(g)


# Cellar door sales baskets: each basket is a multi-hot over 800 SKUs (bottles,
# tasting flights, club allocations, merch) and the model predicts wine-club
# sign-up. An "audit" callback keeps a full copy of the model weights after every
# batch for a later drift report - the list only ever grows, so host RSS climbs
# through the run.
SKUS = 800
BATCH = 512
N_BASKETS = 20480
STEPS_PER_EPOCH = 100
EPOCHS = 6
SEED = 94


def baskets():
    rng = np.random.default_rng(SEED)
    pop = rng.zipf(1.6, size=(N_BASKETS, 12)) % SKUS
    x = np.zeros((N_BASKETS, SKUS), np.float32)
    np.put_along_axis(x, pop, 1.0, axis=1)
    club = (x[:, :40].sum(1) + rng.normal(0, 0.5, N_BASKETS) > 2).astype(np.float32)[:, None]
    return x, club


class WeightAudit(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.snapshots = []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append([w.copy() for w in self.model.get_weights()])


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class RssLog(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.trace = []

    def on_epoch_end(self, epoch, logs=None):
        self.trace.append(round(rss_mib()))


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((SKUS,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["AUC"])
    return m


def run(ds):
    model = build_model()
    timer, audit, rss = StepTimer(), WeightAudit(), RssLog()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer, audit, rss], verbose=0)
    mb = sum(w.nbytes for snap in audit.snapshots for w in snap) / 2**20
    return timer.seconds_per_step(), len(audit.snapshots), mb, rss.trace


x, y = baskets()
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full, n, mb, trace = run(ds)
emit({"steps_per_second": 1.0 / full})
print("cellar door baskets: %.2f ms/step, %.1f steps/s, %d weight snapshots = %.0f MiB held, RSS per epoch %s MiB, wall %.1f s"
      % (full * 1e3, 1.0 / full, n, mb, trace, time.perf_counter() - T0))

if TRUTH:
    one = next(iter(ds))
    compute, n2, mb2, trace2 = run(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f, RSS per epoch %s MiB" % (compute * 1e3, frac, trace2))
