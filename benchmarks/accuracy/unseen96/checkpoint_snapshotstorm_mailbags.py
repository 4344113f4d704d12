"""Mail-bag weigh-station readings -> bag-destination classifier.

Input path: in-memory NumPy features of mail bags (weigh-station load-cell profile,
RFID tag hits, seal barcode features) via tf.data.from_tensor_slices to model.fit.
A callback stamps step time and then saves the full model as a .keras archive after
every batch (in both runs), restarting its clock after the save.
Known bottleneck: the per-batch full-model checkpoint (checkpoint-bound).
"""
import time; T0 = time.perf_counter()
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

N = 8192
BATCH = 32
STEPS = 70
EPOCHS = 3
FEAT = 200
N_DEST = 64
SAVE_EVERY = 1


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class TimedSnapshot(keras.callbacks.Callback):
    """Stamps the step, then saves the whole model, then restarts the clock."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.gaps = []
        self.last = None
        self.save_seconds = 0.0
        self.saves = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        if batch % SAVE_EVERY == 0:
            self.model.save(self.path)
            self.saves += 1
        after = time.perf_counter()
        self.save_seconds += after - now
        self.last = after

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_bags():
    rng = np.random.default_rng(96)
    dest = rng.integers(0, N_DEST, N).astype(np.int32)
    centres = rng.normal(0, 1, (N_DEST, FEAT)).astype(np.float32)
    x = centres[dest] + rng.normal(0, 1.5, (N, FEAT)).astype(np.float32)
    return x, dest


def build_model():
    keras.utils.set_random_seed(96)
    inp = keras.Input((FEAT,))
    h = keras.layers.Dense(1024, activation="relu")(inp)
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(1024, activation="relu")(h)
    h = keras.layers.Dense(512, activation="relu")(h)
    out = keras.layers.Dense(N_DEST)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


X, Y = make_bags()
tmp = tempfile.mkdtemp(prefix="u96_checkpoint_snapshotstorm_mailbags_")


def run(ds, name):
    model = build_model()
    snap = TimedSnapshot(os.path.join(tmp, f"{name}.keras"))
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[snap], verbose=0)
    return snap.seconds_per_step(), snap


try:
    full_ds = tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N, seed=96).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
    full, snap = run(full_ds, "mailbags_full")
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print(f"mailbags: {full*1000:.1f} ms/step, {snap.saves} saves took {snap.save_seconds:.1f} s of {wall:.1f} s wall "
          f"= {100*snap.save_seconds/wall:.1f}%")
    if TRUTH:
        batch = next(iter(full_ds))
        compute, snap2 = run(tf.data.Dataset.from_tensors(batch).repeat(), "mailbags_compute")
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        wall2 = time.perf_counter() - T0
        tot = snap.save_seconds + snap2.save_seconds
        print(f"mailbags truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}; "
              f"saves {tot:.1f} s of {wall2:.1f} s total = {100*tot/wall2:.1f}%")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
