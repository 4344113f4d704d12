import time; T0 = time.perf_counter()
import json
import os
import sys
import shutil
import tempfile
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


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(gaps) / len(gaps)


# Pet-food feeding logs: smart bowls log the bowl weight (grams) every two minutes.
# Each sample is one pet-day; meals are detected with a per-reading Python loop
# (debounce + drop detection) and summarised into half-hour intake bins.
MINUTES = 720  # one reading every two minutes
NUM_FEATS = 48 + 8
BATCH = 64
STEPS = 100
EPOCHS = 4


def simulate_bowl_day(rng):
    grams = np.empty(MINUTES, dtype=np.float64)
    level = rng.uniform(80, 250)
    refill_times = set(rng.integers(150, 650, size=2).tolist())
    meal_times = sorted(rng.integers(0, MINUTES, size=rng.integers(3, 9)).tolist())
    noise = rng.normal(0, 1.5, size=MINUTES)
    mi = 0
    for t in range(MINUTES):
        if t in refill_times:
            level += rng.uniform(60, 200)
        while mi < len(meal_times) and meal_times[mi] == t:
            level = max(0.0, level - rng.uniform(8, 45))
            mi += 1
        grams[t] = level + noise[t]
    return grams


def detect_meals(grams):
    bins = [0.0] * 48
    smoothed = []
    window = []
    for g in grams:
        window.append(g)
        if len(window) > 5:
            window.pop(0)
        smoothed.append(sorted(window)[len(window) // 2])
    meals, refills, eaten = 0, 0, 0.0
    for t in range(1, len(smoothed)):
        delta = smoothed[t] - smoothed[t - 1]
        if delta < -4.0:
            meals += 1
            eaten -= delta
            bins[t // 15] -= delta
        elif delta > 30.0:
            refills += 1
    peak_bin = max(range(48), key=lambda b: bins[b])
    stats = [eaten / 100.0, meals / 10.0, refills / 3.0, peak_bin / 48.0,
             float(np.mean(grams)) / 200.0, float(np.std(grams)) / 50.0,
             float(grams[-1]) / 200.0, float(grams[0]) / 200.0]
    return np.array([b / 50.0 for b in bins] + stats, dtype=np.float32), eaten


class FeedingLogBatches(keras.utils.PyDataset):
    def __init__(self, seed, n_batches):
        super().__init__(workers=1, use_multiprocessing=False)
        self.seed = seed
        self.n_batches = n_batches

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        xs = np.zeros((BATCH, NUM_FEATS), dtype=np.float32)
        ys = np.zeros((BATCH, 1), dtype=np.float32)
        for i in range(BATCH):
            feats, eaten = detect_meals(simulate_bowl_day(rng))
            xs[i] = feats
            ys[i, 0] = float(eaten > 120.0)
        return xs, ys


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((NUM_FEATS,))
    x = keras.layers.Dense(1024, activation="relu")(inp)
    x = keras.layers.Dense(1024, activation="relu")(x)
    x = keras.layers.Dense(512, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(data, **kw):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.seconds_per_step()


full = train(FeedingLogBatches(seed=3, n_batches=STEPS))
emit({"steps_per_second": 1.0 / full})
summary = "feedinglogs PyDataset(workers=1): %.2f ms/step" % (full * 1000)
if TRUTH:
    fixed = FeedingLogBatches(seed=5, n_batches=1)[0]
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat(), steps_per_epoch=STEPS)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
