import time; T0 = time.perf_counter()
"""Processing plant shift rosters: a model predicting line throughput
(fish/hour on the gutting and filleting lines) from the shift roster
(crew skills, station assignments, overtime, line speed) is trained with
model.fit; an "audit" callback keeps a copy of the first-layer weights and
the batch predictions after every batch in a Python list that is never
freed, so host memory grows through the run."""
import os, sys, json, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")

class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps = []; self.last = None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)

def rss_mib():
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1]) / 1024.0
    return 0.0

class RosterAudit(keras.callbacks.Callback):
    """Keeps every batch's first-layer weights for a later drift audit."""
    def __init__(self):
        super().__init__(); self.history = []; self.rss = []
    def on_train_batch_end(self, batch, logs=None):
        kernel = self.model.layers[0].kernel.numpy().copy()
        self.history.append({"batch": batch, "kernel": kernel})
    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(rss_mib())

BATCH = 128
STEPS = 100
EPOCHS = 5
CREW = 40              # roster slots per shift
SLOT_FEAT = 24         # skill one-hots, station, seniority, overtime hours...
NFEAT = CREW * SLOT_FEAT

rng = np.random.default_rng(93)
X = rng.normal(size=(BATCH * STEPS, NFEAT)).astype(np.float32)
Y = (X[:, ::SLOT_FEAT].sum(1) * 40 + 2200).astype(np.float32)[:, None] / 1000.0

def make_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(4096, seed=93).batch(BATCH).repeat().prefetch(2)

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m

def run(ds):
    model = build_model()
    timer = StepTimer(); audit = RosterAudit()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, audit], verbose=0)
    return timer.seconds_per_step(), audit

full, audit = run(make_ds())
emit({"steps_per_second": 1.0 / full})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"[processingshifts] fit with growing audit cache: {full*1000:.2f} ms/step, "
      f"{len(audit.history)} snapshots, RSS per epoch {[round(r) for r in audit.rss]} MiB, "
      f"peak {peak:.0f} MiB, wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    del audit
    batch = next(iter(make_ds()))
    compute, audit2 = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[processingshifts] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, "
          f"RSS per epoch {[round(r) for r in audit2.rss]} MiB")
