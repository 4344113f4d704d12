"""River flood forecasting: predict tomorrow's peak stage at river gauges.

Training uses a modest set of gauge-days; after every epoch a callback scores the whole
held-out archive of gauge-days (all gauges, many years) with model.predict and computes the
Nash-Sutcliffe efficiency and flood-threshold hit rate, which is what the hydrologists watch.
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

N_FEAT = 48
N_TRAIN = 40000
N_HOLDOUT = 500000
BATCH = 128
STEPS = 80
EPOCHS = 4
EVAL_SECONDS = [0.0]


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


class HoldoutSkill(keras.callbacks.Callback):
    """Score the full held-out archive after every epoch."""

    def __init__(self, x, y, flood_stage):
        super().__init__()
        self.x, self.y, self.flood_stage = x, y, flood_stage
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=1024, verbose=0)
        err = pred[:, 0] - self.y[:, 0]
        nse = 1.0 - np.sum(err ** 2) / np.sum((self.y[:, 0] - self.y[:, 0].mean()) ** 2)
        obs_flood = self.y[:, 0] > self.flood_stage
        hit = float(np.mean(pred[obs_flood, 0] > self.flood_stage)) if obs_flood.any() else 0.0
        self.history.append((nse, hit))
        EVAL_SECONDS[0] += time.perf_counter() - t


def gauge_days(rng, n):
    # upstream stages, 7-day basin rainfall, soil moisture, snow, tributary flows
    x = rng.normal(0, 1, (n, N_FEAT)).astype(np.float32)
    x[:, :7] = np.abs(x[:, :7]) * 1.5            # rainfall
    w = np.linspace(1.0, 0.2, N_FEAT).astype(np.float32)
    stage = x @ w / 6.0 + 0.3 * np.tanh(x[:, :7].sum(axis=1) / 4.0) + rng.normal(0, 0.1, n)
    return x, stage.astype(np.float32).reshape(-1, 1)


rng = np.random.default_rng(7910)
x_tr, y_tr = gauge_days(rng, N_TRAIN)
x_ho, y_ho = gauge_days(rng, N_HOLDOUT)
FLOOD = float(np.quantile(y_ho, 0.95))
ds = tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(4096, seed=79).repeat().batch(BATCH).prefetch(2)


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    m = keras.Model(inp, keras.layers.Dense(1)(x), name="peak_stage")
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return m


keras.utils.set_random_seed(79)
model = make_model()
timer = StepTimer()
skill = HoldoutSkill(x_ho, y_ho, FLOOD)
t_fit = time.perf_counter()
model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, skill], verbose=0)
fit_s = time.perf_counter() - t_fit
full = timer.seconds_per_step()
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"floodcast evalcb: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, NSE {skill.history[-1][0]:.3f}, "
      f"eval {EVAL_SECONDS[0]:.1f}s of wall {wall:.1f}s = {EVAL_SECONDS[0]/wall:.1%} evaluation")

if TRUTH:
    xb, yb = next(iter(ds.take(1)))
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(79)
    model2 = make_model()
    timer2 = StepTimer()
    skill2 = HoldoutSkill(x_ho, y_ho, FLOOD)
    model2.fit(one, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2, skill2], verbose=0)
    compute = timer2.seconds_per_step()
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print(f"truth: full {full*1000:.1f} ms, compute {compute*1000:.1f} ms, input fraction {frac:.3f}; "
          f"eval {EVAL_SECONDS[0]:.1f}s of wall {wall:.1f}s = {EVAL_SECONDS[0]/wall:.1%} evaluation")
