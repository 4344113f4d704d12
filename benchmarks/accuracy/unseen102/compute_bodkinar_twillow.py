import time; T0 = time.perf_counter()
"""Yardage estimator: how many metres of cloth a garment order consumes.

Orders (pattern-piece areas, nap direction, pattern repeat, bolt width...)
are already a NumPy matrix; a wide MLP is fitted on the arrays directly.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

SEED = 10207
BATCH = 256
STEPS = 90
EPOCHS = 2
N_FEAT = 256
WIDTH = 2048


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


rng = np.random.default_rng(SEED)
orders = rng.normal(size=(BATCH * STEPS, N_FEAT)).astype(np.float32)
w_true = rng.normal(size=(N_FEAT, 1)).astype(np.float32) / 16.0
yardage = (np.abs(orders @ w_true) + 1.5).astype(np.float32)


def make_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input(shape=(N_FEAT,)),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(3e-4), loss="mse")
    return model


model = make_model()
timer = StepTimer()
t = time.perf_counter()
hist = model.fit(orders, yardage, batch_size=BATCH, epochs=EPOCHS, shuffle=True,
                 callbacks=[timer], verbose=0)
full = timer.sec_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"compute_bodkinar_twillow: {1.0 / full:.2f} steps/s, fit {time.perf_counter() - t:.1f}s, "
      f"loss {hist.history['loss'][-1]:.4f}, wall {time.perf_counter() - T0:.1f}s")

if TRUTH:
    batch = (orders[:BATCH], yardage[:BATCH])
    model = make_model()
    timer = StepTimer()
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
              epochs=EPOCHS, callbacks=[timer], verbose=0)
    compute = timer.sec_per_step()
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full * 1e3:.1f} ms/step, compute {compute * 1e3:.1f} ms/step, "
          f"input fraction {frac:.3f}")
