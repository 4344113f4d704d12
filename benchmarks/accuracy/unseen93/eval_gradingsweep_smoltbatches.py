import time; T0 = time.perf_counter()
"""Smolt batches: a small classifier of smolt readiness (seawater transfer
OK / wait) is trained on a modest labelled set of hatchery grading records,
and after every epoch a callback scores the whole held-out grading archive
with model.predict and computes the transfer-ready share per hatchery."""
import os, sys, json
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

EVAL_SECONDS = [0.0]

class ArchiveScoring(keras.callbacks.Callback):
    def __init__(self, x, hatchery):
        super().__init__(); self.x = x; self.h = hatchery
    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        p = self.model.predict(self.x, batch_size=1024, verbose=0)[:, 0]
        ready = np.bincount(self.h, weights=(p > 0.5), minlength=8) / np.bincount(self.h, minlength=8)
        EVAL_SECONDS[0] += time.perf_counter() - t
        self.last_ready = ready

BATCH = 64
STEPS = 60
EPOCHS = 5
NFEAT = 48             # length, weight, condition factor, Na+/K+-ATPase, skin silvering, ...
N_ARCHIVE = 1_000_000

rng = np.random.default_rng(93)
def records(n):
    x = rng.normal(size=(n, NFEAT)).astype(np.float32)
    y = ((x[:, 0] + 0.5 * x[:, 3] - 0.3 * x[:, 7]) > 0).astype(np.float32)
    return x, y
X_train, Y_train = records(BATCH * STEPS)
X_arch, _ = records(N_ARCHIVE)
H_arch = rng.integers(0, 8, N_ARCHIVE)

def make_ds():
    return tf.data.Dataset.from_tensor_slices((X_train, Y_train)).shuffle(2048, seed=93).batch(BATCH).repeat().prefetch(2)

def build_model():
    keras.utils.set_random_seed(93)
    m = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    m.compile(optimizer="adam", loss="binary_crossentropy")
    return m

def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS,
              callbacks=[timer, ArchiveScoring(X_arch, H_arch)], verbose=0)
    return timer.seconds_per_step()

full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"[smoltbatches] fit + per-epoch archive predict: {full*1000:.2f} ms/step, "
      f"evaluation {EVAL_SECONDS[0]:.1f}s of wall {wall:.1f}s = {100*EVAL_SECONDS[0]/wall:.1f}%")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print(f"[smoltbatches] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}; "
          f"evaluation both runs {EVAL_SECONDS[0]:.1f}s of wall {wall:.1f}s = {100*EVAL_SECONDS[0]/wall:.1f}%")
