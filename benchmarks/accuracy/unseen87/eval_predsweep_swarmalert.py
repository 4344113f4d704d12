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


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps never cross epochs."""

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

# Swarm-alert logs: hourly records from instrumented hives (weight drop over
# the last hour, piping-band acoustic energy, brood-nest temperature spike,
# entrance traffic, queen-cell count from the last inspection, weather ...)
# with a label "swarm within 24 h".  Training uses a modest sample, but after
# every epoch a callback scores the whole season's held-out log with
# model.predict and reports alert precision/recall - that sweep dominates.

N_TRAIN = 8192
N_HOLDOUT = 1600000
N_FEAT = 32
BATCH = 128
EPOCHS = 4
PRED_BATCH = 1024


def swarm_logs(rng, n):
    x = rng.normal(0.0, 1.0, (n, N_FEAT)).astype(np.float32)
    score = (1.2 * x[:, 0] + 0.9 * x[:, 1] + 0.7 * x[:, 2] - 0.5 * x[:, 3]
             + 0.6 * x[:, 4] * x[:, 1] - 2.5)
    y = (score + rng.normal(0, 0.7, n) > 0).astype(np.float32)
    return x, y[:, None]


class HoldoutSweep(keras.callbacks.Callback):
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y
        self.seconds = 0.0

    def on_epoch_end(self, epoch, logs=None):
        t = time.perf_counter()
        p = self.model.predict(self.x, batch_size=PRED_BATCH, verbose=0)[:, 0] > 0.5
        truth = self.y[:, 0] > 0.5
        tp = float(np.sum(p & truth))
        prec = tp / max(float(p.sum()), 1.0)
        rec = tp / max(float(truth.sum()), 1.0)
        self.seconds += time.perf_counter() - t
        print(f"[swarmalert] epoch {epoch}: holdout precision {prec:.3f} recall {rec:.3f}")


def build_model():
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["auc"])
    return model


rng = np.random.default_rng(87)
x_tr, y_tr = swarm_logs(rng, N_TRAIN)
x_ho, y_ho = swarm_logs(rng, N_HOLDOUT)
steps = N_TRAIN // BATCH
train_ds = (tf.data.Dataset.from_tensor_slices((x_tr, y_tr)).shuffle(N_TRAIN, seed=87)
            .batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE))

keras.utils.set_random_seed(87)
timer = StepTimer()
sweep = HoldoutSweep(x_ho, y_ho)
model = build_model()
model.fit(train_ds, epochs=EPOCHS, callbacks=[timer, sweep], verbose=0)
full = seconds_per_step(timer.gaps)
wall = time.perf_counter() - T0
emit({"steps_per_second": 1.0 / full})
print(f"[swarmalert] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"evaluation {sweep.seconds:.1f} s of wall {wall:.1f} s "
      f"= {100.0 * sweep.seconds / wall:.1f}% of wall")

if TRUTH:
    one = tf.data.Dataset.from_tensors((x_tr[:BATCH], y_tr[:BATCH])).repeat()
    keras.utils.set_random_seed(87)
    timer2 = StepTimer()
    sweep2 = HoldoutSweep(x_ho, y_ho)
    model2 = build_model()
    model2.fit(one, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer2, sweep2],
               verbose=0)
    compute = seconds_per_step(timer2.gaps)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[swarmalert] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, truth-run evaluation {sweep2.seconds:.1f} s")
