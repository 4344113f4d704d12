import time; T0 = time.perf_counter()
import os
import sys
import json
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
    """Stamps perf_counter at the end of every training batch; gaps only within an epoch."""

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

# Lens prism inspection shots (memory case): a prism-defect CNN is trained on in-memory
# inspection crops.  A "debug archive" callback keeps, after every batch, a float64
# copy of all model weights plus the batch's crops "for later review" in a Python
# list that is never cleared, so host memory grows through the whole run.

import resource

BATCH = 64
STEPS_PER_EPOCH = 50
EPOCHS = 4
SIDE = 48
N_IMG = 4096
N_CLASS = 4


def make_crops():
    rng = np.random.default_rng(97)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE] / SIDE
    imgs = np.empty((N_IMG, SIDE, SIDE, 1), np.float32)
    labels = rng.integers(0, N_CLASS, N_IMG).astype(np.int32)
    for i in range(N_IMG):
        ridge = 0.5 + 0.4 * np.sin(2 * np.pi * xx * rng.uniform(3, 6))
        if labels[i] == 1:
            ridge[:, :6] *= 0.2
        elif labels[i] == 2:
            ridge[np.abs(yy - xx) < 0.02] = 1.0
        elif labels[i] == 3:
            ridge *= 0.7
        imgs[i, :, :, 0] = ridge + rng.normal(0, 0.05, (SIDE, SIDE))
    return imgs, labels


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class InspectionArchive(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.kept = []
        self.rss_trace = []

    def on_train_batch_end(self, batch, logs=None):
        snap = [w.astype(np.float64) for w in self.model.get_weights()]
        self.kept.append(snap)
        if batch % 25 == 0:
            self.rss_trace.append(round(rss_mib()))


def build_model():
    keras.utils.set_random_seed(13)
    m = keras.Sequential([
        keras.Input((SIDE, SIDE, 1)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(88, activation="relu"),
        keras.layers.Dense(N_CLASS),
    ])
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds, archive):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer, archive], verbose=0)
    return timer.seconds_per_step(), model.count_params()


imgs, labels = make_crops()
archive = InspectionArchive()
ds = tf.data.Dataset.from_tensor_slices((imgs, labels)).shuffle(N_IMG, seed=4).repeat().batch(BATCH).prefetch(2)
full, nparams = train(ds, archive)
emit({"steps_per_second": 1.0 / full})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"[prismshots] normal run: {full*1000:.2f} ms/step, params {nparams}, snapshots {len(archive.kept)}, "
      f"RSS trace MiB {archive.rss_trace}, peak RSS {peak:.0f} MiB, wall {time.perf_counter()-T0:.1f} s")

if TRUTH:
    archive2 = InspectionArchive()
    one = (tf.constant(imgs[:BATCH]), tf.constant(labels[:BATCH]))
    compute, _ = train(tf.data.Dataset.from_tensors(one).repeat(), archive2)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"[prismshots] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, "
          f"peak RSS {peak:.0f} MiB, wall {time.perf_counter()-T0:.1f} s")
