"""Building-footprint use classification for a municipal cadastre.

Footprints arrive as a GeoJSON FeatureCollection written one Feature per line;
a Python generator json.loads each Feature, walks the polygon ring to compute
shape descriptors (shoelace area, perimeter, edge-orientation histogram,
resampled outline) and tf.data.Dataset.from_generator feeds model.fit.
"""
import json
import math
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

N_FEATURES_FILE = 2400
BATCH = 64
STEPS = 150
EPOCHS = 3
N_OUT = 48  # resampled outline points


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        return float(np.mean(self.gaps[5:]))


def write_geojson(path, rng):
    classes = ("residential", "commercial", "industrial", "civic")
    with open(path, "w") as f:
        for i in range(N_FEATURES_FILE):
            c = int(rng.integers(0, 4))
            n = int(rng.integers(60, 160))
            cx, cy = 13.40 + rng.normal(0, 0.05), 52.52 + rng.normal(0, 0.05)
            size = (0.0001, 0.0003, 0.0006, 0.0004)[c] * rng.uniform(0.6, 1.4)
            aspect = (1.0, 1.6, 2.5, 1.2)[c] * rng.uniform(0.8, 1.2)
            rot = rng.uniform(0, math.pi)
            ring = []
            for k in range(n):
                a = 2 * math.pi * k / n
                r = size * (1 + (0.05 + 0.05 * c) * rng.normal())
                x, y = r * aspect * math.cos(a), r * math.sin(a)
                ring.append([round(cx + x * math.cos(rot) - y * math.sin(rot), 7),
                             round(cy + x * math.sin(rot) + y * math.cos(rot), 7)])
            ring.append(ring[0])
            feat = {"type": "Feature", "id": f"bldg-{i:06d}",
                    "properties": {"use": classes[c], "levels": int(rng.integers(1, 12)),
                                   "year": int(rng.integers(1880, 2024))},
                    "geometry": {"type": "Polygon", "coordinates": [ring]}}
            f.write(json.dumps(feat) + "\n")


def shape_features(feat):
    ring = feat["geometry"]["coordinates"][0]
    lat0 = ring[0][1]
    kx = 111320.0 * math.cos(math.radians(lat0))
    pts = [((x - ring[0][0]) * kx, (y - lat0) * 110540.0) for x, y in ring]
    area = 0.0
    perim = 0.0
    hist = [0.0] * 16
    cum = [0.0]
    for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:]):
        area += x0 * y1 - x1 * y0
        d = math.hypot(x1 - x0, y1 - y0)
        perim += d
        cum.append(perim)
        ang = math.atan2(y1 - y0, x1 - x0) % math.pi
        hist[int(ang / math.pi * 16) % 16] += d
    area = abs(area) / 2
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    # resample outline at equal arc length
    outline = []
    j = 0
    for k in range(N_OUT):
        s = perim * k / N_OUT
        while cum[j + 1] < s:
            j += 1
        seg = cum[j + 1] - cum[j] or 1.0
        t = (s - cum[j]) / seg
        x = pts[j][0] + t * (pts[j + 1][0] - pts[j][0]) - mx
        y = pts[j][1] + t * (pts[j + 1][1] - pts[j][1]) - my
        outline.append((x, y, math.hypot(x, y), math.atan2(y, x)))
    scale = math.sqrt(area) + 1e-6
    outline = np.array(outline, np.float32)
    outline[:, :3] /= scale
    props = feat["properties"]
    glob = [math.log1p(area), math.log1p(perim), 4 * math.pi * area / (perim ** 2 + 1e-6),
            (max(xs) - min(xs)) / (max(ys) - min(ys) + 1e-6), len(ring) / 100.0,
            props["levels"] / 12.0, (props["year"] - 1950) / 70.0, 0.0]
    h = np.array(hist, np.float32) / (perim + 1e-6)
    return outline, np.concatenate([np.array(glob, np.float32), h])


USE = {"residential": 0, "commercial": 1, "industrial": 2, "civic": 3}


def make_dataset(path):
    def gen():
        while True:
            with open(path) as f:
                for line in f:
                    feat = json.loads(line)
                    outline, glob = shape_features(feat)
                    yield (outline, glob), USE[feat["properties"]["use"]]
    sig = ((tf.TensorSpec((N_OUT, 4), tf.float32), tf.TensorSpec((24,), tf.float32)),
           tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(gen, output_signature=sig).batch(BATCH)


def build_model():
    keras.utils.set_random_seed(7)
    o = keras.Input((N_OUT, 4))
    g = keras.Input((24,))
    x = layers.Conv1D(128, 5, padding="same", activation="relu")(o)
    x = layers.Conv1D(128, 5, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Concatenate()([x, layers.Dense(64, activation="relu")(g)])
    x = layers.Dense(256, activation="relu")(x)
    out = layers.Dense(4)(x)
    m = keras.Model([o, g], out)
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u43_input_geojson_fromgen_buildingfootprints_")
    try:
        rng = np.random.default_rng(43)
        path = os.path.join(tmp, "footprints.geojsonl")
        write_geojson(path, rng)
        ds = make_dataset(path)
        full, loss = run(ds)
        out = os.environ.get("ACCURACY_OUT")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")
        msg = f"geojson footprints: {1.0 / full:.2f} steps/s, loss {loss:.3f}"
        if truth:
            batch = next(iter(ds))
            comp, _ = run(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
