import time; T0 = time.perf_counter()
"""Trail GPS tracks -> activity type (hike / trail run / mountain bike).

A Python generator simulates raw GPS fixes for each track, computes
haversine segment lengths, speeds and grades point by point in plain
Python, resamples them to a fixed length and yields one sample at a time.
tf.data.Dataset.from_generator batches the samples and feeds model.fit.
"""
import json
import math
import os
import random
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 32
STEPS = 130
EPOCHS = 3
FIXES = 300       # raw GPS fixes per track
SEQ = 64          # resampled length fed to the model
FEATS = 4         # speed, grade, turn rate, elevation delta


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


def haversine(lat1, lon1, lat2, lon2):
    r = 6371000.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def simulate_track(rng):
    activity = rng.randrange(3)
    base_speed = (1.2, 2.8, 5.0)[activity]
    lat, lon, ele = 46.5 + rng.random() * 0.5, 7.5 + rng.random() * 0.8, 1200.0 + rng.random() * 800
    heading = rng.random() * 2 * math.pi
    t = 0.0
    fixes = []
    for _ in range(FIXES):
        heading += rng.gauss(0.0, 0.25)
        dt = 5.0 + rng.random() * 2.0
        step = base_speed * dt * (0.6 + 0.8 * rng.random())
        lat += step * math.cos(heading) / 111320.0
        lon += step * math.sin(heading) / (111320.0 * math.cos(math.radians(lat)))
        ele += rng.gauss(0.0, 2.5) + (0.8 if activity == 0 else -0.3)
        t += dt
        fixes.append((t, lat, lon, ele))
    return fixes, activity


def track_features(fixes):
    rows = []
    prev_bearing = 0.0
    for (t0, la0, lo0, e0), (t1, la1, lo1, e1) in zip(fixes, fixes[1:]):
        d = haversine(la0, lo0, la1, lo1)
        dt = max(t1 - t0, 1e-3)
        speed = d / dt
        grade = (e1 - e0) / max(d, 0.5)
        y = math.sin(math.radians(lo1 - lo0)) * math.cos(math.radians(la1))
        x = (math.cos(math.radians(la0)) * math.sin(math.radians(la1))
             - math.sin(math.radians(la0)) * math.cos(math.radians(la1)) * math.cos(math.radians(lo1 - lo0)))
        bearing = math.degrees(math.atan2(y, x))
        turn = ((bearing - prev_bearing + 540.0) % 360.0) - 180.0
        prev_bearing = bearing
        rows.append((speed, grade, turn / 180.0, (e1 - e0) / 10.0))
    # resample to SEQ points by averaging windows
    out = []
    n = len(rows)
    for i in range(SEQ):
        a, b = i * n // SEQ, (i + 1) * n // SEQ
        win = rows[a:b]
        out.append([sum(r[k] for r in win) / len(win) for k in range(FEATS)])
    return out


def sample_gen():
    rng = random.Random(82)
    while True:
        fixes, activity = simulate_track(rng)
        yield np.asarray(track_features(fixes), np.float32), np.int32(activity)


def make_dataset():
    ds = tf.data.Dataset.from_generator(
        sample_gen,
        output_signature=(tf.TensorSpec((SEQ, FEATS), tf.float32),
                          tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH).prefetch(1)


def build_model():
    keras.utils.set_random_seed(82)
    inp = keras.Input((SEQ, FEATS))
    x = keras.layers.Conv1D(160, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(160, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(3)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main():
    timer = StepTimer()
    model = build_model()
    model.fit(make_dataset(), steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = f"trailgps: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps"
    if TRUTH:
        batch = next(iter(make_dataset()))
        ttimer = StepTimer()
        tmodel = build_model()
        tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[ttimer], verbose=0)
        compute = ttimer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
