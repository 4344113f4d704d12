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

# Bonsai nursery styling-grade model: a callback both stamps step times and
# writes a full .keras archive every few batches (save_every). The stamp is
# taken before the save and the clock restarts after it, so step gaps never
# contain a save, but the saves dominate the wall time.
BATCH = 64
STEPS = 80
EPOCHS = 3
SAVE_EVERY = 1
FEAT = 96
CLASSES = 8

rng = np.random.default_rng(78)
X = rng.normal(size=(4096, FEAT)).astype(np.float32)
Y = rng.integers(CLASSES, size=4096).astype(np.int32)


class TimedBatchSaver(keras.callbacks.Callback):
    def __init__(self, workdir):
        super().__init__()
        self.workdir = workdir
        self.gaps, self.last, self.save_s, self.saves = [], None, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if (batch + 1) % SAVE_EVERY == 0:
            self.model.save(os.path.join(self.workdir, f"bonsai_{self.saves % 3}.keras"))
            self.saves += 1
            after = time.perf_counter()
            self.save_s += after - now
            self.last = after
        else:
            self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def full_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(BATCH).prefetch(2)


workdir = tempfile.mkdtemp(prefix="u78_checkpoint_batchsave_bonsai_")
try:
    def run(ds):
        keras.utils.set_random_seed(78)
        m = build()
        cb = TimedBatchSaver(workdir)
        m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0, shuffle=False)
        return cb.seconds_per_step(), cb.save_s, cb.saves

    full, save_s, n = run(full_ds())
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print(f"[checkpoint_batchsave_bonsai] full {full*1000:.1f} ms/step, {n} saves {save_s:.1f}s = "
          f"{100*save_s/wall:.0f}% of wall {wall:.1f}s")
    if TRUTH:
        batch = next(iter(full_ds()))
        comp, s2, n2 = run(tf.data.Dataset.from_tensors(batch).repeat())
        f = input_fraction(full, comp)
        emit({"truth_input_fraction": f})
        wall = time.perf_counter() - T0
        print(f"[checkpoint_batchsave_bonsai] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}, "
              f"saves {save_s+s2:.1f}s = {100*(save_s+s2)/wall:.0f}% of wall {wall:.1f}s")
finally:
    shutil.rmtree(workdir, ignore_errors=True)
