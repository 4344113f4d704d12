"""Lift-ticket sales forecasting: an MLP on in-memory daily sales features;
after every epoch a callback runs model.predict over a large held-out season
(all resorts x ticket types x days) and reports MAPE. Evaluation-bound."""
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


FEAT = 32
N_TRAIN = 32768
N_HOLDOUT = 600000
BATCH = 256
STEPS = 64
EPOCHS = 4
EVAL_SECONDS = [0.0]


def make_sales(n, seed):
    rng = np.random.default_rng(seed)
    day = rng.integers(0, 150, n)
    snow = rng.gamma(2.0, 30.0, n)
    temp = rng.normal(-4, 6, n)
    holiday = (rng.random(n) < 0.12).astype(np.float32)
    weekend = ((day % 7) >= 5).astype(np.float32)
    price = rng.uniform(40, 120, n)
    resort = rng.integers(0, 20, n)
    x = np.zeros((n, FEAT), np.float32)
    x[:, 0] = day / 150
    x[:, 1] = snow / 100
    x[:, 2] = temp / 10
    x[:, 3] = holiday
    x[:, 4] = weekend
    x[:, 5] = price / 100
    x[np.arange(n), 6 + resort] = 1.0
    x[:, 26:] = rng.normal(0, 1, (n, FEAT - 26))
    y = (200 + 3 * snow + 150 * holiday + 120 * weekend - 1.5 * price - 4 * np.abs(temp + 5)
         + 10 * resort + rng.normal(0, 20, n)).clip(5, None) / 500.0
    return x, y.astype(np.float32)[:, None]


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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


class SeasonHoldout(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        pred = self.model.predict(self.x, batch_size=1024, verbose=0)
        mape = float(np.mean(np.abs(pred - self.y) / np.maximum(self.y, 0.01)))
        EVAL_SECONDS[0] += time.perf_counter() - t
        self.mapes = getattr(self, "mapes", []) + [mape]


def build_model():
    keras.utils.set_random_seed(89)
    inp = keras.Input((FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(512, activation="relu")(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out, name="lift_ticket_sales")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def train(ds, hx, hy):
    model = build_model()
    timer = StepTimer()
    hold = SeasonHoldout(hx, hy)
    t = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer, hold], verbose=0)
    return timer.seconds_per_step(), time.perf_counter() - t, hold.mapes[-1]


def main():
    x, y = make_sales(N_TRAIN, 89)
    hx, hy = make_sales(N_HOLDOUT, 90)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_TRAIN, seed=89).repeat().batch(BATCH).prefetch(2)
    full, fit_s, mape = train(ds, hx, hy)
    emit({"steps_per_second": 1.0 / full})
    wall = time.perf_counter() - T0
    print("liftsales normal: %.4f s/step, fit %.1f s, holdout MAPE %.3f, eval %.1f s = %.0f%% of wall %.1f s"
          % (full, fit_s, mape, EVAL_SECONDS[0], 100 * EVAL_SECONDS[0] / wall, wall))
    if TRUTH:
        comp, _, _ = train(tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat(), hx, hy)
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        wall = time.perf_counter() - T0
        print("liftsales truth: compute %.4f s/step, input fraction %.3f, eval %.1f s = %.0f%% of wall %.1f s"
              % (comp, frac, EVAL_SECONDS[0], 100 * EVAL_SECONDS[0] / wall, wall))


if __name__ == "__main__":
    main()
