"""Glassblowing gathers -> gather-weight regressor with per-batch .keras saves.

Load-cell readings on the blowpipe rest plus furnace temperature and the
gaffer's turn count estimate how much molten glass each gather picked up.
The shop's training script is paranoid about power cuts near the furnace:
a callback writes the full model to a .keras archive after every training
batch (in both runs).  The same callback stamps the step clock before the
save and restarts it after, so step gaps never include a save.
"""
import time; T0 = time.perf_counter()
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

FEAT = 64
BATCH = 8
STEPS = 60
EPOCHS = 3
SAVE_SECONDS = [0.0]
SAVES = [0]


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StampAndSave(keras.callbacks.Callback):
    """Stamps the step clock, saves the full model, then restarts the clock."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.model.save(self.path)
        after = time.perf_counter()
        SAVE_SECONDS[0] += after - now
        SAVES[0] += 1
        self.last = after

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_gathers(n, r):
    furnace_c = r.normal(1130, 15, n)
    turns = r.integers(2, 9, n)
    dip_s = r.uniform(1.0, 4.0, n)
    x = np.concatenate([((furnace_c - 1130) / 15)[:, None], (turns / 8)[:, None], (dip_s / 4)[:, None],
                        r.normal(0, 1, (n, FEAT - 3))], axis=1).astype(np.float32)
    grams = 150 + 60 * turns * dip_s / 10 + 0.8 * (furnace_c - 1130) + r.normal(0, 10, n)
    return x, ((grams - 300) / 100).astype(np.float32)[:, None]


def make_model():
    return keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(1),
    ])


def train(dataset, path):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", metrics=["mae"])
    cb = StampAndSave(path)
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[cb], verbose=0)
    return cb.seconds_per_step()


root = tempfile.mkdtemp(prefix="u91_checkpoint_savekerasbatch_glassgathers_")
try:
    rng = np.random.default_rng(91)
    x, y = make_gathers(BATCH * STEPS, rng)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=91).batch(BATCH).repeat()
    full = train(ds, os.path.join(root, "gathers_latest.keras"))
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"glassgathers: normal run {full*1000:.1f} ms/step, {SAVES[0]} saves took {SAVE_SECONDS[0]:.1f}s "
          f"of wall {wall:.1f}s = {100*SAVE_SECONDS[0]/wall:.1f}% saving "
          f"({os.path.getsize(os.path.join(root, 'gathers_latest.keras'))/1e6:.1f} MB archive)")

    if TRUTH:
        fixed = next(iter(ds))
        compute = train(tf.data.Dataset.from_tensors(fixed).repeat(), os.path.join(root, "gathers_truth.keras"))
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print(f"glassgathers: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, "
              f"{SAVES[0]} saves {SAVE_SECONDS[0]:.1f}s of wall {wall:.1f}s = {100*SAVE_SECONDS[0]/wall:.1f}% saving")
finally:
    shutil.rmtree(root, ignore_errors=True)
