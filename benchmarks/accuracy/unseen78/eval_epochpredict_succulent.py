import time
T0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
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
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(gaps))


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))

# Succulent nursery grading: after every epoch a callback scores the full
# held-out grading archive with model.predict and computes per-grade accuracy.
# The archive is large, so end-of-epoch evaluation dominates the wall time.
BATCH = 64
STEPS = 60
EPOCHS = 4
FEAT = 128
CLASSES = 5
N_VAL = 240000

rng = np.random.default_rng(78)
XT = rng.normal(size=(4096, FEAT)).astype(np.float32)
YT = rng.integers(CLASSES, size=4096).astype(np.int32)
XV = rng.normal(size=(N_VAL, FEAT)).astype(np.float32)
YV = rng.integers(CLASSES, size=N_VAL).astype(np.int32)


class GradingArchiveEval(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = np.argmax(self.model.predict(XV, batch_size=1024, verbose=0), axis=1)
        per_grade = [float(np.mean(pred[YV == c] == c)) for c in range(CLASSES)]
        self.seconds += time.perf_counter() - t
        self.last = per_grade


def build():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    ev = GradingArchiveEval()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, ev], verbose=0, shuffle=False)
    return timer.seconds_per_step(), ev.seconds


def full_ds():
    return tf.data.Dataset.from_tensor_slices((XT, YT)).repeat().batch(BATCH).prefetch(2)


full, ev_s = run(full_ds())
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print(f"[eval_epochpredict_succulent] full {full*1000:.1f} ms/step, eval {ev_s:.1f}s = "
      f"{100*ev_s/wall:.0f}% of wall {wall:.1f}s")
if TRUTH:
    batch = next(iter(full_ds()))
    comp, ev2 = run(tf.data.Dataset.from_tensors(batch).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[eval_epochpredict_succulent] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, "
          f"eval {ev2:.1f}s")
