"""Studio class bookings -> no-show predictor with a heavy end-of-epoch eval.

A community ceramics studio logs bookings for wheel-throwing, handbuilding,
raku and glassblowing taster classes.  The model trains on a modest slice,
and a callback scores the whole multi-season held-out booking history with
model.evaluate and model.predict in on_epoch_end (in both runs), so
evaluation dominates the wall time.
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

FEAT = 48
BATCH = 128
STEPS = 40
EPOCHS = 4
N_TRAIN = BATCH * STEPS
N_HELDOUT = 280_000
EVAL_SECONDS = [0.0]


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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


class HeldoutBookings(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y

    def on_train_begin(self, logs=None):
        print(f"  fit started at {time.perf_counter() - T0:.1f}s")

    def on_epoch_begin(self, epoch, logs=None):
        print(f"  epoch {epoch} begins at {time.perf_counter() - T0:.1f}s")

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        res = self.model.evaluate(self.x, self.y, batch_size=2048, verbose=0, return_dict=True)
        probs = self.model.predict(self.x, batch_size=2048, verbose=0)
        flagged = int((probs[:, 0] > 0.5).sum())
        EVAL_SECONDS[0] += time.perf_counter() - t
        print(f"  epoch {epoch} at {time.perf_counter() - T0:.1f}s: heldout loss {res['loss']:.4f} auc {res['auc']:.3f}, flagged no-shows {flagged}")


def make_bookings(n, r):
    class_type = r.integers(0, 6, n)                 # wheel, handbuild, raku, glaze lab, glass taster, kids
    lead_days = r.exponential(9, n)
    hour = r.integers(9, 21, n)
    prior_noshow = r.poisson(0.4, n)
    member = r.random(n) < 0.35
    x = np.zeros((n, FEAT), np.float32)
    x[np.arange(n), class_type] = 1
    x[:, 6] = np.log1p(lead_days) / 4
    x[:, 7] = hour / 21
    x[:, 8] = prior_noshow
    x[:, 9] = member
    x[:, 10:] = r.normal(0, 1, (n, FEAT - 10))
    logit = -1.5 + 0.5 * x[:, 6] + 0.6 * prior_noshow - 0.8 * member + 0.3 * (class_type == 4) + 0.2 * x[:, 10]
    y = (r.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)[:, None]
    return x, y


def make_model():
    return keras.Sequential([
        keras.Input((FEAT,)),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])


def train(dataset, heldout):
    keras.utils.set_random_seed(91)
    model = make_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy",
                  metrics=[keras.metrics.AUC(name="auc")])
    timer = StepTimer()
    model.fit(dataset, epochs=EPOCHS, steps_per_epoch=STEPS,
              callbacks=[timer, HeldoutBookings(*heldout)], verbose=0)
    return timer.seconds_per_step()


rng = np.random.default_rng(91)
xtr, ytr = make_bookings(N_TRAIN, rng)
heldout = make_bookings(N_HELDOUT, rng)
t_data = time.perf_counter() - T0
ds = tf.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(N_TRAIN, seed=91).batch(BATCH).repeat().prefetch(2)
full = train(ds, heldout)
emit({"steps_per_second": 1.0 / full})
wall = time.perf_counter() - T0
print(f"studiobookings: normal run {full*1000:.1f} ms/step, eval {EVAL_SECONDS[0]:.1f}s of wall {wall:.1f}s "
      f"= {100*EVAL_SECONDS[0]/wall:.1f}% evaluation (imports+data ready at {t_data:.1f}s)")

if TRUTH:
    fixed = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat(), heldout)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    wall = time.perf_counter() - T0
    print(f"studiobookings: truth compute {compute*1000:.1f} ms/step, input fraction {frac:.3f}, "
          f"eval {EVAL_SECONDS[0]:.1f}s of wall {wall:.1f}s = {100*EVAL_SECONDS[0]/wall:.1f}% evaluation")
