"""Groundwater observation wells: forecast next-month piezometric head from a year of data.

All well histories (daily head, nearby rainfall and pumping) are generated up front and held
in memory; tf.data.Dataset.from_tensor_slices(...).shuffle().batch().prefetch() feeds a
1-D convolutional network through model.fit.
"""
import time; T0 = time.perf_counter()
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

N_WELLS = 6000
DAYS = 365
BATCH = 64
STEPS = 170
EPOCHS = 4


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


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

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


rng = np.random.default_rng(7907)
rain = rng.gamma(0.35, 6.0, (N_WELLS, DAYS)).astype(np.float32)
pumping = (rng.random((N_WELLS, 1)) < 0.4) * rng.uniform(0, 2, (N_WELLS, DAYS))
recharge = np.apply_along_axis(lambda r: np.convolve(r, np.exp(-np.arange(60) / 20.0), "full")[:DAYS], 1, rain)
head = (rng.uniform(-30, -2, (N_WELLS, 1)) + 0.004 * recharge - 0.3 * np.cumsum(pumping, axis=1) / DAYS
        + rng.normal(0, 0.05, (N_WELLS, DAYS))).astype(np.float32)
x_all = np.stack([head / 30.0, np.log1p(rain) / 3.0, pumping.astype(np.float32)], axis=-1).astype(np.float32)
y_all = (head[:, -1:] + 0.002 * recharge[:, -1:] + rng.normal(0, 0.1, (N_WELLS, 1))).astype(np.float32) / 30.0

ds = (tf.data.Dataset.from_tensor_slices((x_all, y_all))
      .shuffle(2048, seed=79)
      .repeat()
      .batch(BATCH)
      .prefetch(tf.data.AUTOTUNE))


def make_model():
    inp = keras.Input(shape=(DAYS, 3))
    x = keras.layers.Conv1D(32, 7, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(32, 7, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x), name="well_head")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


keras.utils.set_random_seed(79)
model = make_model()
timer = StepTimer()
t_fit = time.perf_counter()
model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
fit_s = time.perf_counter() - t_fit
full = timer.seconds_per_step()
emit({"steps_per_second": 1.0 / full})
print(f"piezometer densefit: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, fit {fit_s:.1f}s, "
      f"wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    xb, yb = next(iter(ds.take(1)))
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(79)
    model2 = make_model()
    timer2 = StepTimer()
    model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
    compute = timer2.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}")
