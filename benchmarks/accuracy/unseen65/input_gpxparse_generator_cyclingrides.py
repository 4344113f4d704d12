"""Cycling rides: effort-zone classifier fed by a Python generator that parses GPX track XML.

Bottleneck (input): every ride is parsed from GPX text in Python (string splitting, float parsing,
haversine distances, grade and speed smoothing) inside a generator wrapped in
tf.data.Dataset.from_generator, with no parallelism.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at the end of every training batch; gaps only within an epoch."""

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

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def emit(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def truth_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)

SEED = 6501
N_RIDES = 256
POINTS = 64
BATCH = 32
STEPS = 60
EPOCHS = 3


def make_gpx_corpus(rng):
    rides, labels = [], []
    for i in range(N_RIDES):
        lat, lon, ele = 45.0 + rng.uniform(-1, 1), 7.0 + rng.uniform(-1, 1), rng.uniform(100, 900)
        effort = int(rng.integers(0, 5))
        pts = []
        t = 0
        for p in range(POINTS):
            lat += rng.normal(1e-4 * (1 + effort), 3e-5)
            lon += rng.normal(1e-4, 3e-5)
            ele += rng.normal(0.3 * (effort - 2), 0.8)
            t += int(rng.integers(3, 6))
            hr = int(100 + 15 * effort + rng.normal(0, 6))
            cad = int(60 + 8 * effort + rng.normal(0, 5))
            pts.append(
                f'<trkpt lat="{lat:.7f}" lon="{lon:.7f}"><ele>{ele:.1f}</ele>'
                f"<time>2024-05-01T08:{(t // 60) % 60:02d}:{t % 60:02d}Z</time>"
                f"<extensions><hr>{hr}</hr><cad>{cad}</cad></extensions></trkpt>"
            )
        rides.append('<gpx><trk><name>ride %d</name><trkseg>%s</trkseg></trk></gpx>' % (i, "".join(pts)))
        labels.append(effort)
    return rides, np.array(labels, np.int32)


def parse_gpx(text):
    import math
    body = text.split("<trkseg>", 1)[1].split("</trkseg>", 1)[0]
    rows = []
    prev = None
    for chunk in body.split("<trkpt ")[1:]:
        lat = float(chunk.split('lat="', 1)[1].split('"', 1)[0])
        lon = float(chunk.split('lon="', 1)[1].split('"', 1)[0])
        ele = float(chunk.split("<ele>", 1)[1].split("</ele>", 1)[0])
        hms = chunk.split("<time>", 1)[1].split("</time>", 1)[0][11:19].split(":")
        ts = int(hms[0]) * 3600 + int(hms[1]) * 60 + int(hms[2])
        hr = float(chunk.split("<hr>", 1)[1].split("</hr>", 1)[0])
        cad = float(chunk.split("<cad>", 1)[1].split("</cad>", 1)[0])
        if prev is None:
            dist, dt, grade = 0.0, 1.0, 0.0
        else:
            p_lat, p_lon, p_ele, p_ts = prev
            phi1, phi2 = math.radians(p_lat), math.radians(lat)
            dphi, dl = phi2 - phi1, math.radians(lon - p_lon)
            a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dl / 2) ** 2
            dist = 2 * 6371000.0 * math.asin(math.sqrt(a))
            dt = max(1.0, float((ts - p_ts) % 3600))
            grade = (ele - p_ele) / max(dist, 1.0)
        prev = (lat, lon, ele, ts)
        rows.append([dist / dt, grade, hr / 200.0, cad / 120.0, ele / 1000.0, dt / 10.0])
    # 5-point moving average on speed and grade, done in Python like many hobby pipelines
    smoothed = []
    for i in range(len(rows)):
        lo, hi = max(0, i - 2), min(len(rows), i + 3)
        sp = sum(r[0] for r in rows[lo:hi]) / (hi - lo)
        gr = sum(r[1] for r in rows[lo:hi]) / (hi - lo)
        smoothed.append([sp, gr] + rows[i][2:])
    return np.asarray(smoothed, np.float32)


def build_model():
    inp = keras.Input((POINTS, 6))
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(inp)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(5)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    rides, labels = make_gpx_corpus(rng)

    def gen():
        order = np.random.default_rng(SEED + 1)
        while True:
            for i in order.permutation(N_RIDES):
                yield parse_gpx(rides[i]), labels[i]

    sig = (tf.TensorSpec((POINTS, 6), tf.float32), tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH)

    keras.utils.set_random_seed(SEED)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.sec_per_step()
    emit({"steps_per_second": 1.0 / full})
    print(f"[cyclingrides] gpx generator fit: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
          f"wall so far {time.perf_counter() - _T0:.1f}s")

    if args.truth:
        xb = np.stack([parse_gpx(rides[i]) for i in range(BATCH)])
        yb = labels[:BATCH]
        one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
        keras.utils.set_random_seed(SEED)
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
        comp = timer2.sec_per_step()
        frac = truth_fraction(full, comp)
        emit({"truth_input_fraction": frac})
        print(f"[cyclingrides] truth: full {full * 1000:.1f} ms, compute {comp * 1000:.1f} ms, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
