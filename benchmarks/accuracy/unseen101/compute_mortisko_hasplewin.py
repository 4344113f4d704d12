import time; T0 = time.perf_counter()
"""Mortise-lock tolerance regressor: wide MLP trained with model.fit on NumPy arrays.

All data (case dimensions, backset, lever spring rates, measured play) is built
up front as NumPy arrays; the step time is dominated by the wide dense layers.
"""
import os, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")
SEED = 1017
BATCH = 256
N = 256 * 40
EPOCHS = 7
FEATS = 128
WIDTH = 1536


def emit(d):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(d) + "\n")


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

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


rs = np.random.RandomState(SEED)
x = rs.normal(0, 1, (N, FEATS)).astype(np.float32)
w_true = rs.normal(0, 0.2, (FEATS, 1)).astype(np.float32)
y = (np.tanh(x @ w_true) + 0.05 * rs.normal(0, 1, (N, 1))).astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((FEATS,)),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(1),
    ])
    m.compile(optimizer="adam", loss="mse")
    return m


model = build_model()
timer = StepTimer()
model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, callbacks=[timer], verbose=0)
full = timer.sec_per_step()
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
msg = f"compute_mortisko_hasplewin: {1.0/full:.2f} steps/s, wall {wall:.1f}s"

if TRUTH:
    batch = (x[:BATCH], y[:BATCH])
    model = build_model()
    timer = StepTimer()
    model.fit(tf.data.Dataset.from_tensors(batch).repeat(), epochs=EPOCHS,
              steps_per_epoch=N // BATCH, callbacks=[timer], verbose=0)
    compute = timer.sec_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    msg += f", compute {1.0/compute:.2f} steps/s, truth_input_fraction {frac:.3f}"
print(msg)
