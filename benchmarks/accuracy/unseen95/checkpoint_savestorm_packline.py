"""Packing-line counters -> stoppage risk in the next 10 minutes.

Counter windows from the tea-bag / caddy packing line (bags formed, tags
stapled, cartons sealed, rejects) feed a wide MLP; a callback writes the
full model to a .keras archive after every batch.  The same callback stamps
step times: it stamps first, saves, then restarts the clock, so step gaps
never contain a save.
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

BATCH = 16
STEPS = 22
EPOCHS = 3
WINDOW = 60
COUNTERS = 6
WIDTH = 1280


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StampAndSave(keras.callbacks.Callback):
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
        self.model.save(self.path)                                     # resumable archive
        self.model.save_weights(self.path.replace(".keras", ".weights.h5"))  # backup for the line PLC
        self.saves += 1
        after = time.perf_counter()
        self.save_seconds += after - now
        self.last = after

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def counter_windows(seed, n):
    rng = np.random.default_rng(seed)
    rate = rng.uniform(80, 140, (n, 1, 1))
    drift = rng.normal(0, 0.5, (n, 1, COUNTERS))
    counts = rng.poisson(rate * np.ones((1, WINDOW, COUNTERS))) + np.cumsum(drift * np.ones((1, WINDOW, 1)), 1)
    rejects = counts[:, -10:, 3].mean(1)
    risk = (rejects > np.median(rejects)).astype(np.float32)
    x = ((counts - 110.0) / 30.0).reshape(n, -1).astype(np.float32)
    return x, risk[:, None]


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((WINDOW * COUNTERS,)),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(ds, path):
    model = build_model()
    cb = StampAndSave(path)
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[cb], verbose=0)
    return cb


folder = tempfile.mkdtemp(prefix="u95_checkpoint_savestorm_packline_")
try:
    x, y = counter_windows(91, BATCH * STEPS)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048, seed=4).batch(BATCH).repeat().prefetch(2)
    cb = train(ds, os.path.join(folder, "packline.keras"))
    full = cb.seconds_per_step()
    wall = time.perf_counter() - T0
    emit({"steps_per_second": 1.0 / full})
    print("[packline] normal run: %.4f s/step, %d saves took %.1f s of wall %.1f s = %.1f%%"
          % (full, cb.saves, cb.save_seconds, wall, 100.0 * cb.save_seconds / wall))
    if TRUTH:
        one = next(iter(ds))
        cb2 = train(tf.data.Dataset.from_tensors(one).repeat(), os.path.join(folder, "packline_truth.keras"))
        compute = cb2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        wall2 = time.perf_counter() - T0
        print("[packline] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f; "
              "saves both runs %.1f s of wall %.1f s = %.1f%%"
              % (full, compute, frac, cb.save_seconds + cb2.save_seconds, wall2,
                 100.0 * (cb.save_seconds + cb2.save_seconds) / wall2))
finally:
    shutil.rmtree(folder, ignore_errors=True)
