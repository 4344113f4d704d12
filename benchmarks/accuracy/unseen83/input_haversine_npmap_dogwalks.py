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
import math


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


# Dog-walking GPS traces: a walk id goes through a serial tf.data map that calls
# tf.numpy_function; the NumPy/Python side synthesises the walker's GPS fixes and
# computes haversine legs, pace, stops (sniff breaks) and turn angles.
FIXES = 32
NUM_FEATS = 40
BATCH = 32
STEPS = 220
EPOCHS = 3
EARTH_M = 6371000.0


def walk_features(walk_id):
    rng = np.random.default_rng(int(walk_id))
    lat = 47.61 + rng.normal(0, 0.01)
    lon = -122.33 + rng.normal(0, 0.01)
    heading = rng.uniform(0, 2 * math.pi)
    pts = []
    for i in range(FIXES):
        heading += rng.normal(0, 0.35)
        step_m = 0.0 if rng.random() < 0.15 else rng.uniform(3.0, 12.0)
        lat += step_m * math.cos(heading) / 111320.0
        lon += step_m * math.sin(heading) / (111320.0 * math.cos(math.radians(lat)))
        pts.append((lat, lon))
    legs, turns, stops, run = [], [], 0, 0
    for (a_lat, a_lon), (b_lat, b_lon) in zip(pts, pts[1:]):
        p1, p2 = math.radians(a_lat), math.radians(b_lat)
        dp, dl = p2 - p1, math.radians(b_lon - a_lon)
        h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        d = 2 * EARTH_M * math.asin(math.sqrt(h))
        legs.append(d)
        turns.append(math.atan2(dl * math.cos(p1), dp))
        if d < 0.5:
            run += 1
        else:
            if run >= 3:
                stops += 1
            run = 0
    legs = np.array(legs)
    hist, _ = np.histogram(legs, bins=16, range=(0, 16))
    thist, _ = np.histogram(np.diff(np.unwrap(turns)), bins=16, range=(-1.5, 1.5))
    stats = [legs.sum() / 1000.0, legs.mean() / 10.0, legs.std() / 10.0, stops / 10.0,
             float(np.percentile(legs, 90)) / 10.0, (pts[-1][0] - pts[0][0]) * 100,
             (pts[-1][1] - pts[0][1]) * 100, float(len(legs)) / FIXES]
    feats = np.concatenate([hist / FIXES, thist / FIXES, stats]).astype(np.float32)
    label = np.float32(legs.sum() > 1100.0 and stops < 6)
    return feats, label


def parse_walk(walk_id):
    feats, label = tf.numpy_function(walk_features, [walk_id], [tf.float32, tf.float32])
    feats.set_shape((NUM_FEATS,))
    label.set_shape(())
    return feats, tf.expand_dims(label, -1)


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((NUM_FEATS,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def train(dataset):
    model = build_model()
    timer = StepTimer()
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


walks = (tf.data.Dataset.range(10_000_000)
         .map(parse_walk)
         .batch(BATCH, drop_remainder=True)
         .prefetch(1))
full = train(walks)
emit({"steps_per_second": 1.0 / full})
summary = "dogwalks numpy_function map: %.2f ms/step" % (full * 1000)
if TRUTH:
    fixed = next(iter(tf.data.Dataset.range(5_000_000, 5_000_000 + BATCH).map(parse_walk).batch(BATCH)))
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
