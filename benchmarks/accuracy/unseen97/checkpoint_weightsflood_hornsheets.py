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

# Foghorn maintenance sheets: each quarterly sheet records compressor hours, air
# receiver pressure, reed/diaphragm wear gauge readings, lubricant and fault codes as
# numbers; a model predicts the next-service urgency class.  The maintenance crew's
# script saves the full model (.keras archive) after every training batch "so that no
# work is lost when the generator shuts down" -- in both runs.  One callback stamps,
# then saves, then restarts its clock, so step gaps never contain a save.

import tempfile
import shutil

BATCH = 32
STEPS_PER_EPOCH = 30
EPOCHS = 3
N_SHEETS = 16384
N_FEAT = 96
N_CLASS = 5


def make_sheets():
    rng = np.random.default_rng(97)
    hours = rng.gamma(3.0, 400.0, (N_SHEETS, 1))
    pressure = rng.normal(7.0, 0.6, (N_SHEETS, 8))
    wear = np.cumsum(rng.uniform(0, 0.1, (N_SHEETS, 24)), axis=1) * (hours / 1200.0)
    faults = rng.poisson(0.3, (N_SHEETS, 32)).astype(np.float64)
    rest = rng.normal(0, 1, (N_SHEETS, N_FEAT - 1 - 8 - 24 - 32))
    x = np.concatenate([hours / 1000.0, pressure - 7.0, wear, faults, rest], axis=1).astype(np.float32)
    score = wear[:, -1] + 0.3 * faults.sum(axis=1) + 0.5 * np.abs(pressure - 7.0).mean(axis=1)
    y = np.digitize(score, np.quantile(score, [0.2, 0.4, 0.6, 0.8])).astype(np.int32)
    return x, y


class StampThenSave(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
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
        path = os.path.join(self.folder, f"foghorn_service_e{self.saves % 3}.keras")
        self.model.save(path)
        self.saves += 1
        done = time.perf_counter()
        self.save_seconds += done - now
        self.last = done

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def build_model():
    keras.utils.set_random_seed(12)
    m = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(2048, activation="relu"),
        keras.layers.Dense(N_CLASS),
    ])
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return m


def train(ds, saver):
    model = build_model()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[saver], verbose=0)
    return saver.seconds_per_step()


folder = tempfile.mkdtemp(prefix="u97_checkpoint_weightsflood_hornsheets_")
try:
    x, y = make_sheets()
    saver = StampThenSave(folder)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_SHEETS, seed=3).repeat().batch(BATCH).prefetch(2)
    full = train(ds, saver)
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"[hornsheets] normal run: {full*1000:.2f} ms/step, {saver.saves} saves took {saver.save_seconds:.1f} s of "
          f"{wall:.1f} s wall = {100*saver.save_seconds/wall:.1f}%")
    if TRUTH:
        saver2 = StampThenSave(folder)
        one = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
        compute = train(tf.data.Dataset.from_tensors(one).repeat(), saver2)
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        tot = saver.save_seconds + saver2.save_seconds
        print(f"[hornsheets] truth: compute {compute*1000:.2f} ms/step, input fraction {frac:.3f}, "
              f"saves {tot:.1f} s of {wall:.1f} s wall = {100*tot/wall:.1f}%")
finally:
    shutil.rmtree(folder, ignore_errors=True)
