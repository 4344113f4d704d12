import time; T0 = time.perf_counter()
"""Lapel-roll predictor for tailored coats, with an over-eager backup habit.

The atelier's training script saves the full model (.keras) every few
batches "so nothing is ever lost", which dominates the run.
"""
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

SEED = 10210
BATCH = 16
STEPS = 300
EPOCHS = 2
SAVE_EVERY = 2
N_FEAT = 40
N_OUT = 4            # roll line, break point, gorge height, notch depth


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


class BackupEveryFewBatches(keras.callbacks.Callback):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder
        self.seconds = 0.0
        self.saves = 0

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % SAVE_EVERY == 0:
            t = time.perf_counter()
            self.model.save(os.path.join(self.folder, "lapel_latest.keras"))
            self.seconds += time.perf_counter() - t
            self.saves += 1


rng = np.random.default_rng(SEED)
x = rng.normal(size=(BATCH * STEPS, N_FEAT)).astype(np.float32)
y = np.tanh(x[:, :N_OUT] + 0.3 * x[:, N_OUT:2 * N_OUT]).astype(np.float32)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(1024, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(N_OUT),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


tmp = tempfile.mkdtemp(prefix="u102_checkpoint_sergette_lapelmo_")
try:
    model = make_model()
    timer, backup = StepTimer(), BackupEveryFewBatches(tmp)
    t = time.perf_counter()
    model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, callbacks=[timer, backup], verbose=0)
    fit_wall = time.perf_counter() - t
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print(f"checkpoint_sergette_lapelmo: {1.0 / full:.1f} steps/s, {backup.saves} saves {backup.seconds:.1f}s "
          f"= {100 * backup.seconds / fit_wall:.0f}% of fit {fit_wall:.1f}s, "
          f"{100 * backup.seconds / wall:.0f}% of wall {wall:.1f}s")

    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        model = make_model()
        timer, backup = StepTimer(), BackupEveryFewBatches(tmp)
        model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS, epochs=EPOCHS,
                  callbacks=[timer, backup], verbose=0)
        compute = timer.sec_per_step()
        frac = min(1.0, max(0.0, (full - compute) / full))
        emit({"truth_input_fraction": frac})
        print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
              f"input fraction {frac:.3f}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
