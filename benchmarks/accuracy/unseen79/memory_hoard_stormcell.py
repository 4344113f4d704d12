"""Weather-radar storm cells: classify cell severity (hail / heavy rain / benign) from reflectivity.

Each sample is a 48x48 composite-reflectivity patch (dBZ) centred on a tracked storm cell.
A well-meant "audit trail" callback keeps a copy of the model weights every few batches so the
forecasters can later replay how the classifier evolved; the snapshots are never released,
so host memory grows for the whole run.
"""
import time; T0 = time.perf_counter()
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_CELLS = 12000
PATCH = 48
BATCH = 64
STEPS = 100
EPOCHS = 4
SNAPSHOT_EVERY = 4


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
        g = self.gaps[5:]
        return sum(g) / len(g)


class WeightAuditTrail(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.trail = []
        self.rss = []

    def on_train_batch_end(self, batch, logs=None):
        if batch % SNAPSHOT_EVERY == 0:
            self.trail.append([w.copy() for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(round(rss_mib()))


rng = np.random.default_rng(7912)
yy, xx = np.mgrid[0:PATCH, 0:PATCH]
sev = rng.integers(0, 3, N_CELLS)
core = rng.uniform(35, 50, N_CELLS) + sev * 8
width = rng.uniform(4, 12, N_CELLS)
cy, cx = rng.uniform(18, 30, (2, N_CELLS))
dbz = core[:, None, None] * np.exp(-(((yy[None] - cy[:, None, None]) ** 2 + (xx[None] - cx[:, None, None]) ** 2)
                                     / (2 * width[:, None, None] ** 2)))
dbz = (dbz + rng.normal(0, 2, dbz.shape)).clip(0, 75).astype(np.float32)[..., None] / 75.0
ds = tf.data.Dataset.from_tensor_slices((dbz, sev)).shuffle(4096, seed=79).repeat().batch(BATCH).prefetch(2)


def make_model():
    inp = keras.Input(shape=(PATCH, PATCH, 1))
    x = keras.layers.Conv2D(32, 3, activation="relu", padding="same")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, activation="relu", padding="same")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(3, activation="softmax")(x), name="cell_severity")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


keras.utils.set_random_seed(79)
model = make_model()
timer = StepTimer()
audit = WeightAuditTrail()
t_fit = time.perf_counter()
model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, audit], verbose=0)
fit_s = time.perf_counter() - t_fit
full = timer.seconds_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"stormcell hoard: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, {len(audit.trail)} snapshots of "
      f"{model.count_params()} params, RSS by epoch {audit.rss} MiB, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = next(iter(ds.take(1)))
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(79)
    model2 = make_model()
    timer2 = StepTimer()
    audit2 = WeightAuditTrail()
    model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2, audit2], verbose=0)
    compute = timer2.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}; "
          f"RSS by epoch {audit2.rss} MiB")
