import time; T0 = time.perf_counter()
# Dryer lint screen camera: grayscale photos of the lint filter -> clog level
# (clean / light / heavy / fire-risk). For a later weight-averaging study a
# callback copies every layer's weights to host memory after every batch and
# never lets go of them, so resident memory grows through the run.
import os
import sys
import json
import gc
import resource

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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class WeightHistory(keras.callbacks.Callback):
    """Keeps a host copy of all weights after every batch (for SWA experiments)."""

    def __init__(self):
        super().__init__()
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        self.history.append([np.array(w, copy=True) for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        mb = sum(a.nbytes for snap in self.history for a in snap) / 2**20
        print(f"[lintscreens]   epoch {epoch}: {len(self.history)} snapshots, {mb:.0f} MiB held, RSS {rss_mib():.0f} MiB")


BATCH = 32
STEPS = 60
EPOCHS = 3
SIZE = 64

rng = np.random.default_rng(592)
N = BATCH * STEPS
clog = rng.integers(0, 4, N)
yy, xx = np.mgrid[0:SIZE, 0:SIZE]
mesh = 0.5 + 0.1 * ((xx % 4 == 0) | (yy % 4 == 0))
imgs = np.empty((N, SIZE, SIZE, 1), np.float32)
for i in range(N):
    fluff = rng.random((SIZE, SIZE)) < (0.05 + 0.2 * clog[i])
    imgs[i, ..., 0] = np.clip(mesh + 0.4 * fluff + rng.normal(0, 0.05, (SIZE, SIZE)), 0, 1)
labels = clog.astype(np.int32)


def make_model():
    inp = keras.Input(shape=(SIZE, SIZE, 1))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    keras.utils.set_random_seed(55)
    model = make_model()
    timer = StepTimer()
    hist = WeightHistory()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, hist], verbose=0, shuffle=False)
    n_params = model.count_params()
    return timer.seconds_per_step(), len(hist.history), n_params


ds = (tf.data.Dataset.from_tensor_slices((imgs, labels)).shuffle(N, seed=4)
      .batch(BATCH, drop_remainder=True).repeat().prefetch(2))
full, n_snap, n_params = train(ds)
emit({"steps_per_second": 1.0 / full})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"[lintscreens] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, {n_snap} snapshots of "
      f"{n_params} params, peak RSS {peak:.0f} MiB, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    gc.collect()
    one = next(iter(ds))
    compute, _, _ = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[lintscreens] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
