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

# Hive weight scales: one-minute weight readings for a whole day per hive.
# A Python generator synthesises each hive-day and reduces it to 15-minute
# window statistics (mean, spread, slope, range) in a per-window Python loop;
# tf.data.Dataset.from_generator feeds model.fit.  Target: nectar-flow kg/day.

BATCH = 64
STEPS = 70
EPOCHS = 2
MINUTES = 1440
WINDOW = 30
HIDDEN = 1536
N_WIN = MINUTES // WINDOW


def hive_day(rng):
    t = np.arange(MINUTES, dtype=np.float64)
    base = 38.0 + rng.normal(0.0, 4.0)
    flow = rng.uniform(0.0, 2.5)
    departure = rng.uniform(0.1, 0.7)
    daylight = np.clip(np.sin(np.pi * (t - 360.0) / 840.0), 0.0, None)
    foragers_out = -departure * daylight
    nectar = flow * np.cumsum(daylight) / daylight.sum()
    evap = -0.25 * flow * t / MINUTES
    weight = base + foragers_out + nectar + evap + rng.normal(0.0, 0.03, MINUTES)
    if rng.random() < 0.1:  # beekeeper lifted the lid / added a super
        k = int(rng.integers(400, 1000))
        weight[k:] += rng.choice([-4.0, 6.0])
    return weight, flow


def window_features(weight):
    xs = np.arange(WINDOW, dtype=np.float64)
    xc = xs - xs.mean()
    sxx = float((xc * xc).sum())
    rows = []
    for k in range(0, MINUTES, WINDOW):
        seg = weight[k:k + WINDOW]
        m = seg.mean()
        rows.append((m, seg.std(), float(np.dot(xc, seg - m)) / sxx,
                     seg.max() - seg.min(), seg[-1] - seg[0]))
    feats = np.asarray(rows, dtype=np.float32)
    feats[:, 0] -= feats[0, 0]
    return feats.reshape(-1)


def scale_stream(seed):
    rng = np.random.default_rng(seed)
    while True:
        weight, flow = hive_day(rng)
        yield window_features(weight), np.float32(flow)


def make_dataset(seed):
    ds = tf.data.Dataset.from_generator(
        lambda: scale_stream(seed),
        output_signature=(tf.TensorSpec((N_WIN * 5,), tf.float32),
                          tf.TensorSpec((), tf.float32)))
    return ds.batch(BATCH)


def build_model():
    model = keras.Sequential([
        keras.Input((N_WIN * 5,)),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(HIDDEN, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss="mse")
    return model


keras.utils.set_random_seed(87)
timer = StepTimer()
model = build_model()
model.fit(make_dataset(87), steps_per_epoch=STEPS, epochs=EPOCHS,
          callbacks=[timer], verbose=0)
full = seconds_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
print(f"[hivescale] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    xb, yb = next(iter(make_dataset(88)))
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(87)
    timer2 = StepTimer()
    model2 = build_model()
    model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
    compute = seconds_per_step(timer2.gaps)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[hivescale] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
