"""Weekly flush counts per estate section -> plucking-round yield.

Shoot counts (two-and-a-bud, banjhi, coarse) by section and week feed an
MLP.  An "audit" callback keeps, after every batch, a snapshot of all model
weights plus the predictions on a monitoring slice, in a list that is never
trimmed, so host memory grows for the whole run.
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

BATCH = 256
STEPS = 110
EPOCHS = 3
FEATS = 96
WIDTH = 768
AUDIT_TRAIL = []        # module-level, never trimmed


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
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
        g = self.gaps[5:]
        return sum(g) / len(g)


class AuditTrail(keras.callbacks.Callback):
    def __init__(self, monitor_x):
        super().__init__()
        self.monitor_x = monitor_x
        self.rss = []

    def on_train_batch_end(self, batch, logs=None):
        AUDIT_TRAIL.append({"weights": self.model.get_weights(),
                            "monitor": np.asarray(self.model(self.monitor_x, training=False)),
                            "loss": None if logs is None else logs.get("loss")})
        if batch % 20 == 0:
            self.rss.append(rss_mib())


def flush_counts(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.poisson(rng.uniform(5, 40, (n, 1)), (n, FEATS)).astype(np.float32) / 20.0
    w = rng.normal(0, 1, FEATS).astype(np.float32) / np.sqrt(FEATS)
    y = (np.tanh(x @ w) + 0.05 * rng.normal(0, 1, n)).astype(np.float32)[:, None]
    return x, y


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds, monitor_x):
    model = build_model()
    timer = StepTimer()
    audit = AuditTrail(monitor_x)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, audit], verbose=0)
    return timer.seconds_per_step(), audit


x, y = flush_counts(101, BATCH * STEPS)
monitor_x = x[:1024]
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=6).batch(BATCH).repeat().prefetch(2)
full, audit = train(ds, monitor_x)
emit({"steps_per_second": 1.0 / full})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print("[flushcounts] normal run: %.4f s/step, %d audit snapshots, RSS %s MiB, peak %.0f MiB, wall %.1f s"
      % (full, len(AUDIT_TRAIL), "/".join("%.0f" % r for r in audit.rss[::3]), peak,
         time.perf_counter() - T0))

if TRUTH:
    one = next(iter(ds))
    compute, _ = train(tf.data.Dataset.from_tensors(one).repeat(), monitor_x)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[flushcounts] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f, "
          "%d snapshots, peak %.0f MiB"
          % (full, compute, frac, len(AUDIT_TRAIL), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0))
