import time; T0 = time.perf_counter()
# Delivery route schedules for laundry vans (hotel linen, pickup lockers,
# home delivery): predict whether a stop misses its time window. Training is
# small; after every epoch a callback scores the whole held-out season of
# stops with model.evaluate, which dominates the run.
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
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


EVAL_SECONDS = [0.0]


class SeasonHoldout(keras.callbacks.Callback):
    """Scores the full held-out season after every epoch."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        res = self.model.evaluate(self.x, self.y, batch_size=4096, verbose=0, return_dict=True)
        EVAL_SECONDS[0] += time.perf_counter() - t
        print(f"[deliveryvans]   epoch {epoch} holdout loss {res['loss']:.4f} acc {res['accuracy']:.3f}")


BATCH = 256
STEPS = 80
EPOCHS = 4
N_FEAT = 32
N_HOLD = 1_000_000


def route_stops(rng, n):
    stop_idx = rng.integers(1, 40, n)
    km_from_depot = rng.gamma(3.0, 6.0, n)
    window_min = rng.choice([30, 60, 120, 240], n)
    hour = rng.uniform(6, 20, n)
    bags = rng.poisson(4, n)
    hotel = rng.random(n) < 0.3
    locker = rng.random(n) < 0.2
    traffic = 1 + 0.5 * np.exp(-((hour - 8.5) ** 2) / 2) + 0.5 * np.exp(-((hour - 17.5) ** 2) / 2)
    eta_slack = window_min - (stop_idx * 7 + km_from_depot * 2.2 * traffic + bags * 1.5) / 3
    late = (eta_slack + rng.normal(0, 20, n) < 0).astype(np.float32)
    base = np.stack([stop_idx / 40, km_from_depot / 50, window_min / 240, hour / 24, bags / 10,
                     hotel, locker, traffic, np.sin(hour / 24 * 6.283), np.cos(hour / 24 * 6.283)], 1)
    noise = rng.normal(0, 1, (n, N_FEAT - base.shape[1]))
    return np.concatenate([base, noise], 1).astype(np.float32), late[:, None]


rng = np.random.default_rng(192)
x_tr, y_tr = route_stops(rng, BATCH * STEPS)
x_hold, y_hold = route_stops(rng, N_HOLD)


def make_model():
    inp = keras.Input(shape=(N_FEAT,))
    x = keras.layers.Dense(512, activation="relu")(inp)
    x = keras.layers.Dense(256, activation="relu")(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return m


def train(ds):
    keras.utils.set_random_seed(31)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, verbose=0,
              callbacks=[timer, SeasonHoldout(x_hold, y_hold)], shuffle=False)
    return timer.seconds_per_step()


ds = (tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(len(x_tr), seed=2)
      .batch(BATCH, drop_remainder=True).repeat().prefetch(2))
full = train(ds)
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"[deliveryvans] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, evaluation "
      f"{EVAL_SECONDS[0]:.1f}s of {wall:.1f}s wall = {100*EVAL_SECONDS[0]/wall:.1f}%")

if TRUTH:
    one = (x_tr[:BATCH], y_tr[:BATCH])
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print(f"[deliveryvans] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}; evaluation {EVAL_SECONDS[0]:.1f}s of {wall:.1f}s wall = "
          f"{100*EVAL_SECONDS[0]/wall:.1f}%")
