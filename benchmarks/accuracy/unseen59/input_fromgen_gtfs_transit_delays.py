"""Public transit: predict end-of-trip delay from GTFS-style stop_times text.

Data path: a Python generator builds raw stop_times.txt lines for each trip,
parses them with csv + string splitting (HH:MM:SS -> seconds, per-stop
headway and dwell features) and yields one trip at a time through
tf.data.Dataset.from_generator -> batch -> prefetch -> model.fit.
Bottleneck: the per-trip Python parsing (input).
"""
import time
WALL0 = time.perf_counter()
import csv, io, json, os, sys
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, EPOCHS, STOPS = 32, 50, 2, 48


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__(); self.gaps, self.last = [], None
    def on_epoch_begin(self, epoch, logs=None):
        self.last = None
    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
    def sec_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def hms(s):
    h, m, x = s.split(":")
    return int(h) * 3600 + int(m) * 60 + int(x)


def fmt(t):
    return "%02d:%02d:%02d" % (t // 3600, (t // 60) % 60, t % 60)


def trip_text(rng, trip):
    t = int(rng.integers(5 * 3600, 22 * 3600))
    lines = ["trip_id,arrival_time,departure_time,stop_id,stop_sequence,shape_dist_traveled"]
    dist = 0.0
    for k in range(STOPS):
        t += int(rng.integers(40, 240)); dwell = int(rng.integers(0, 60))
        dist += float(rng.uniform(0.2, 1.5))
        lines.append("T%06d,%s,%s,S%05d,%d,%.3f" % (trip, fmt(t), fmt(t + dwell), rng.integers(0, 99999), k + 1, dist))
        t += dwell
    return "\n".join(lines)


def parse_trip(text):
    rows = list(csv.DictReader(io.StringIO(text)))
    feats = np.zeros((STOPS, 5), np.float32)
    prev_dep, prev_dist = None, 0.0
    for i, r in enumerate(rows):
        arr, dep = hms(r["arrival_time"]), hms(r["departure_time"])
        d = float(r["shape_dist_traveled"])
        run = (arr - prev_dep) if prev_dep is not None else 0
        feats[i] = [arr / 86400.0, (dep - arr) / 60.0, run / 300.0, (d - prev_dist), int(r["stop_id"][1:]) % 97 / 97.0]
        prev_dep, prev_dist = dep, d
    label = np.float32(feats[:, 1].sum() / 10.0 + feats[:, 2].mean())
    return feats, label


def gen():
    rng = np.random.default_rng(59)
    trip = 0
    while True:
        trip += 1
        text = trip_text(rng, trip)
        feats, label = parse_trip(text)
        yield feats, np.array([label], np.float32)


def make_ds():
    sig = (tf.TensorSpec((STOPS, 5), tf.float32), tf.TensorSpec((1,), tf.float32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH).prefetch(2)


def build():
    keras.utils.set_random_seed(59)
    m = keras.Sequential([keras.Input((STOPS, 5)), keras.layers.Conv1D(128, 5, activation="relu"),
                          keras.layers.Conv1D(128, 5, activation="relu"), keras.layers.Conv1D(128, 5, activation="relu"), keras.layers.GlobalAveragePooling1D(),
                          keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    timer = StepTimer()
    build().fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def main():
    full = run(make_ds())
    emit({"steps_per_second": 1.0 / full})
    print("input_fromgen_gtfs_transit_delays: %.4f s/step (%.1f steps/s), wall %.1f s" % (full, 1 / full, time.perf_counter() - WALL0))
    if "--truth" in sys.argv:
        batch = next(iter(make_ds()))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print("truth: full %.4f compute %.4f input fraction %.3f" % (full, comp, frac))


if __name__ == "__main__":
    main()
