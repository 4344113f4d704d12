"""Family-tree record linkage (is census person A the same as baptism person B?).

Input path: in-memory NumPy pair features feed model.fit.  A "trajectory"
callback keeps a float16 copy of every weight tensor after every batch for
later analysis of how the linker converged; the list is never pruned, so
host memory grows all through the run.  Expected bottleneck: memory.
"""
import time; T0 = time.perf_counter()
import os, sys, json, resource
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS = 256, 100, 3
NFEAT, N = 256, 20480


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def linkage_pairs(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (N, NFEAT)).astype(np.float32)
    w = np.random.default_rng(81).normal(0, 1, NFEAT).astype(np.float32)
    y = ((x @ w) > 0).astype(np.float32)
    return x, y


def build_model():
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


class WeightTrajectory(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.snapshots, self.rss = [], []

    def on_train_batch_end(self, batch, logs=None):
        self.snapshots.append([w.astype(np.float16) for w in self.model.get_weights()])

    def on_epoch_end(self, epoch, logs=None):
        self.rss.append(rss_mib())


def train(ds):
    model = build_model()
    timer, traj = StepTimer(), WeightTrajectory()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, traj], verbose=0)
    return timer.seconds_per_step(), traj


keras.utils.set_random_seed(81)
x, y = linkage_pairs(81)
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=81).batch(BATCH).repeat()
full, traj = train(ds)
emit({"steps_per_second": 1.0 / full})
print("familytrees: %.1f ms/step, %d snapshots kept, RSS per epoch %s MiB, peak %.0f MiB, wall %.1f s" % (
    full * 1e3, len(traj.snapshots), [round(r) for r in traj.rss],
    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, time.perf_counter() - T0))
if TRUTH:
    batch = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
    compute, traj2 = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("familytrees truth: full %.1f ms, compute %.1f ms, input fraction %.3f, RSS now %.0f MiB" % (
        full * 1e3, compute * 1e3, frac, rss_mib()))
