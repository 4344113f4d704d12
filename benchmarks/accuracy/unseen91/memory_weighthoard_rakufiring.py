"""Raku firings -> crackle/luster outcome model with a leaky history callback.

Raku pieces are pulled red-hot and dropped into combustible reduction cans;
the outcome (luster, crackle density, carbon trapping) depends on pull
temperature, can size, newspaper vs sawdust, and seconds before lidding.
The experiment-tracking callback keeps a copy of every layer's weights and
the batch's predictions after every batch "to plot the training trajectory
later" - a Python list that is never cleared, so host memory grows all run.
"""
import time; T0 = time.perf_counter()
import json
import os
import resource
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

FEAT = 96
BATCH = 128
STEPS = 50
EPOCHS = 3
OUTCOMES = 5


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


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


class TrajectoryRecorder(keras.callbacks.Callback):
    """Keeps every batch's weights (and a probe prediction) forever."""

    def __init__(self, probe):
        super().__init__()
        self.probe = probe
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        snap = [np.array(w, copy=True) for w in self.model.get_weights()]
        self.history.append({"batch": batch, "weights": snap,
                             "probe_logits": np.asarray(self.model(self.probe, training=False))})

    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: {len(self.history)} snapshots kept, rss {rss_mib():.0f} MiB")


def make_firings(n, r):
    pull_c = r.normal(980, 40, n)
    can_l = r.choice([20, 40, 60, 120], n)
    sawdust = r.random(n) < 0.5
    lid_s = r.uniform(2, 30, n)
    x = np.concatenate([((pull_c - 980) / 40)[:, None], (can_l / 120)[:, None], sawdust[:, None],
                        (lid_s / 30)[:, None], r.normal(0, 1, (n, FEAT - 4))], axis=1).astype(np.float32)
    score = 0.02 * (pull_c - 980) + 1.5 * sawdust - 0.05 * lid_s + 0.01 * can_l
    y = np.digitize(score + r.normal(0, 0.5, n), np.quantile(score, [0.2, 0.4, 0.6, 0.8])).astype(np.int32)
    return x, y


def make_model():
    return keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(OUTCOMES),
    ])


def train(dataset, probe):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    timer = StepTimer()
    recorder = TrajectoryRecorder(probe)
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, recorder], verbose=0)
    return timer.seconds_per_step(), recorder


rng = np.random.default_rng(91)
x, y = make_firings(BATCH * STEPS, rng)
probe = x[:512]
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=91).batch(BATCH).repeat()
full, rec = train(ds, probe)
emit({"steps_per_second": 1.0 / full})
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(f"rakufiring: normal run {full*1000:.1f} ms/step, {len(rec.history)} snapshots, "
      f"rss now {rss_mib()/1024:.2f} GiB, peak {peak:.2f} GiB, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    fixed = next(iter(ds))
    compute, rec2 = train(tf.data.Dataset.from_tensors(fixed).repeat(), probe)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"rakufiring: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, "
          f"peak rss {peak:.2f} GiB, wall {time.perf_counter()-T0:.1f}s")
