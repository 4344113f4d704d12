import time
WALL0 = time.perf_counter()
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


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Hydropower turbine efficiency model with frequent checkpointing.

Unit operating records (head, flow, guide-vane opening, runner speed,
vibration, bearing temperature, tailwater level) plus a unit id feed model.fit
from in-memory arrays via tf.data. The model looks the unit up in a large
frozen (trainable=False) pretrained embedding table (450k x 128) and trains a
small MLP on top; the frozen table is cheap in training but is written in
every checkpoint. A custom callback both times the steps and
saves a tf.train.Checkpoint (model + optimizer) through a
tf.train.CheckpointManager (max_to_keep=3) every training batch. The
step clock is stamped before the save and restarted after it, so step gaps
never contain a save. Bottleneck: the checkpoint writes.
"""
SEED = 58
BATCH = 32
STEPS = 50
EPOCHS = 2
SAVE_EVERY = 1
FEAT = 16
N_UNITS = 450000  # rows of the frozen per-unit hydrology embedding table
EMB = 128

rng = np.random.default_rng(SEED)
X = rng.normal(0, 1, (4096, FEAT)).astype(np.float32)
UNIT = rng.integers(0, N_UNITS, (4096, 1)).astype(np.int32)
Y = (np.tanh(X[:, :4].sum(1, keepdims=True)) + 0.05 * rng.normal(0, 1, (4096, 1))).astype(np.float32)


class TimedCheckpointer(keras.callbacks.Callback):
    def __init__(self, directory):
        super().__init__()
        self.directory = directory
        self.gaps = []
        self.last = None
        self.save_seconds = 0.0
        self.saves = 0
        self.manager = None

    def on_train_begin(self, logs=None):
        ckpt = tf.train.Checkpoint(model=self.model, optimizer=self.model.optimizer)
        self.manager = tf.train.CheckpointManager(ckpt, self.directory, max_to_keep=3)

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        if (batch + 1) % SAVE_EVERY == 0:
            s = time.perf_counter()
            self.manager.save()
            self.save_seconds += time.perf_counter() - s
            self.saves += 1
        self.last = time.perf_counter()


def build_model():
    keras.utils.set_random_seed(SEED)
    xi = keras.Input((FEAT,))
    ui = keras.Input((1,), dtype="int32")
    # frozen pretrained per-unit table (not updated, but written in every checkpoint)
    e = keras.layers.Embedding(N_UNITS, EMB, trainable=False)(ui)
    h = keras.layers.Concatenate()([xi, keras.layers.Flatten()(e)])
    h = keras.layers.Dense(256, activation="relu")(h)
    h = keras.layers.Dense(256, activation="relu")(h)
    m = keras.Model([xi, ui], keras.layers.Dense(1)(h))
    m.compile(optimizer="adam", loss="mse")
    return m


def make_ds():
    ds = tf.data.Dataset.from_tensor_slices(((X, UNIT), Y)).shuffle(4096, seed=SEED).repeat()
    return ds.batch(BATCH, drop_remainder=True).prefetch(2)


def run(ds, directory):
    model = build_model()
    cb = TimedCheckpointer(directory)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return sec_per_step(cb.gaps), cb.save_seconds, cb.saves


tmp = tempfile.mkdtemp(prefix="u58_checkpoint_ckptmanager_batchcb_hydroturbines_")
try:
    print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
    full, sv, n = run(make_ds(), os.path.join(tmp, "full"))
    wall = time.perf_counter() - WALL0
    emit({"steps_per_second": 1.0 / full})
    print(f"checkpoint_ckptmanager_batchcb_hydroturbines: {full*1000:.1f} ms/step, "
          f"{1.0/full:.2f} steps/s, {n} saves {sv:.1f} s = {100*sv/wall:.0f}% of wall {wall:.1f} s")
    if TRUTH:
        batch = next(iter(make_ds()))
        compute, sv2, n2 = run(tf.data.Dataset.from_tensors(batch).repeat(), os.path.join(tmp, "truth"))
        wall = time.perf_counter() - WALL0
        print(f"saves total {sv+sv2:.1f} s = {100*(sv+sv2)/wall:.0f}% of wall {wall:.1f} s")
        emit_truth(full, compute)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
