"""Marriage banns books -> record linkage score for bride/groom pairs.

Input path: in-memory NumPy pair features (name similarity, parish distance,
ages, calling of the banns dates) feed model.fit.  A callback writes a full
.keras snapshot of the model every batch ("never lose the clerk's
work"), in both runs; the same callback stamps step times so gaps never
contain a save.  Expected bottleneck: checkpointing (save share of wall).
"""
import time; T0 = time.perf_counter()
import os, sys, json, shutil, tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
BATCH, STEPS, EPOCHS, SAVE_EVERY = 16, 65, 2, 1
NFEAT, N = 96, 16384


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def banns_pairs(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (N, NFEAT)).astype(np.float32)
    w = np.random.default_rng(81).normal(0, 1, NFEAT).astype(np.float32)
    y = ((x @ w + rng.normal(0, 2, N)) > 0).astype(np.float32)
    return x, y


def build_model():
    model = keras.Sequential([
        keras.Input((NFEAT,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


class SnapshotStepTimer(keras.callbacks.Callback):
    """Stamps a step, then saves, then restarts the clock after the save."""

    def __init__(self, path, every):
        super().__init__()
        self.path, self.every = path, every
        self.gaps, self.last, self.save_seconds, self.saves = [], None, 0.0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if (batch + 1) % self.every == 0:
            self.model.save(self.path)
            self.saves += 1
            self.save_seconds += time.perf_counter() - now
        self.last = time.perf_counter()

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def train(ds, path):
    model = build_model()
    snap = SnapshotStepTimer(path, SAVE_EVERY)
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[snap], verbose=0)
    return snap, hist.history


tmp = tempfile.mkdtemp(prefix="u81_checkpoint_kerassnap_marriagebanns_")
try:
    keras.utils.set_random_seed(81)
    x, y = banns_pairs(81)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=81).batch(BATCH).repeat()
    snap, hist = train(ds, os.path.join(tmp, "banns_linker.keras"))
    full = snap.seconds_per_step()
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print("marriagebanns: %.1f ms/step, acc %.3f, %d saves took %.1f s of %.1f s wall = %.0f%%" % (
        full * 1e3, hist["accuracy"][-1], snap.saves, snap.save_seconds, wall, 100 * snap.save_seconds / wall))
    if TRUTH:
        batch = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
        snap2, _ = train(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "banns_linker_truth.keras"))
        compute = snap2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        saves = snap.save_seconds + snap2.save_seconds
        print("marriagebanns truth: full %.1f ms, compute %.1f ms, input fraction %.3f; saves %.1f s of %.1f s total = %.0f%%" % (
            full * 1e3, compute * 1e3, frac, saves, wall, 100 * saves / wall))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
