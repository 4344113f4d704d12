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

# Honey extraction yields: one row per extraction run (supers pulled, frame
# count, capped fraction, refractometer moisture, honey-house temperature,
# uncapping method, extractor rpm and spin minutes, forage mix ...).  All
# rows are generated up front and held in memory; tf.data.from_tensor_slices
# + shuffle + batch + prefetch feeds a wide MLP that predicts kg extracted.
# The matrix multiplies dominate each step.

N_ROWS = 40000
N_FEAT = 48
BATCH = 256
STEPS = 60
EPOCHS = 2
HIDDEN = 2048


def extraction_runs(rng):
    frames = rng.integers(8, 80, N_ROWS).astype(np.float32)
    capped = rng.uniform(0.6, 1.0, N_ROWS).astype(np.float32)
    moisture = rng.normal(17.5, 1.2, N_ROWS).astype(np.float32)
    room_c = rng.normal(27.0, 3.0, N_ROWS).astype(np.float32)
    rpm = rng.uniform(150, 400, N_ROWS).astype(np.float32)
    spin_min = rng.uniform(5, 20, N_ROWS).astype(np.float32)
    other = rng.normal(0.0, 1.0, (N_ROWS, N_FEAT - 6)).astype(np.float32)
    kg = (frames * 2.1 * capped * (1 - 0.02 * (moisture - 17.5))
          * (1 - np.exp(-spin_min * rpm / 2500.0)) + 0.3 * other[:, 0]
          + rng.normal(0, 1.5, N_ROWS)).astype(np.float32)
    x = np.column_stack([frames / 80, capped, (moisture - 17.5) / 1.2, (room_c - 27) / 3,
                         rpm / 400, spin_min / 20, other]).astype(np.float32)
    return x, kg[:, None]


def build_model():
    model = keras.Sequential([
        keras.Input((N_FEAT,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss="huber", metrics=["mae"])
    return model


X, Y = extraction_runs(np.random.default_rng(87))
ds = (tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(8192, seed=87)
      .batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))

keras.utils.set_random_seed(87)
timer = StepTimer()
model = build_model()
model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
full = seconds_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
print(f"[honeyyield] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    xb, yb = X[:BATCH], Y[:BATCH]
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(87)
    timer2 = StepTimer()
    model2 = build_model()
    model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
    compute = seconds_per_step(timer2.gaps)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[honeyyield] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
