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

# Glasshouse yield forecaster with a "weight trajectory" callback intended for
# later stochastic weight averaging: it appends a numpy copy of every weight
# tensor after every batch and never prunes the list, so host memory grows
# linearly during training (the model itself is ~1.3 MB).
BATCH = 512
STEPS = 420
EPOCHS = 3
FEAT = 64
WIDTH = 384

rng = np.random.default_rng(78)
X = rng.normal(size=(16384, FEAT)).astype(np.float32)
Y = (X[:, :6].sum(1, keepdims=True) * 0.4).astype(np.float32)


class WeightTrajectory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        self.history.append([w.copy() for w in self.model.get_weights()])


def rss_gib():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1048576
    except OSError:
        return float("nan")


class RssLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(f"[memory_weighthistory_glasshouse] epoch {epoch} RSS {rss_gib():.2f} GiB", flush=True)


def build():
    m = keras.Sequential([keras.Input((FEAT,)),
                          keras.layers.Dense(WIDTH, activation="relu"),
                          keras.layers.Dense(WIDTH, activation="relu"),
                          keras.layers.Dense(WIDTH, activation="relu"),
                          keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def full_ds():
    return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(BATCH).prefetch(2)


def run(ds):
    keras.utils.set_random_seed(78)
    m = build()
    timer = StepTimer()
    traj = WeightTrajectory()
    m.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, traj, RssLog()], verbose=0, shuffle=False)
    n = len(traj.history)
    traj.history.clear()
    return timer.seconds_per_step(), n


full, n = run(full_ds())
emit({"steps_per_second": 1.0 / full})
print(f"[memory_weighthistory_glasshouse] full {full*1000:.1f} ms/step, {n} snapshots, "
      f"wall {time.perf_counter()-T0:.1f}s")
if TRUTH:
    batch = next(iter(full_ds()))
    comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat())
    f = input_fraction(full, comp)
    emit({"truth_input_fraction": f})
    print(f"[memory_weighthistory_glasshouse] truth: compute {comp*1000:.1f} ms/step, input fraction {f:.3f}")
