"""Land-use classification of cadastral parcels exported from a GIS as WKT.

Each parcel is one CSV line holding a WKT POLYGON string (outer ring plus
holes) and a land-use label. A Python generator behind
tf.data.Dataset.from_generator parses the WKT text, projects the ring onto a
64x64 grid and rasterises it with PIL.ImageDraw before a small CNN sees it.
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
from PIL import Image, ImageDraw
import tensorflow as tf
import keras

SEED = 42
N_PARCELS = 1200
GRID = 64
BATCH = 32
STEPS = 90
EPOCHS = 2
CLASSES = 5


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] or self.gaps
        return sum(g) / len(g)


def ring_wkt(cx, cy, radius, lobes, n_vertices, rng):
    pts = []
    for k in range(n_vertices):
        a = 2 * math.pi * k / n_vertices
        r = radius * (1.0 + 0.35 * math.sin(lobes * a)) * (1 + 0.03 * rng.standard_normal())
        pts.append("%.6f %.6f" % (cx + r * math.cos(a), cy + r * math.sin(a)))
    pts.append(pts[0])
    return "(" + ", ".join(pts) + ")"


def write_parcels(path, rng):
    with open(path, "w") as fh:
        fh.write("parcel_id;land_use;geometry\n")
        for i in range(N_PARCELS):
            label = int(rng.integers(CLASSES))
            # easting / northing in a local UTM-like frame
            cx = 512000 + rng.uniform(0, 5000)
            cy = 5400000 + rng.uniform(0, 5000)
            radius = 40 + 15 * label + rng.uniform(0, 20)
            rings = [ring_wkt(cx, cy, radius, label + 2, 700, rng)]
            for _ in range(label % 3):  # courtyards / holes
                hx = cx + rng.uniform(-0.3, 0.3) * radius
                hy = cy + rng.uniform(-0.3, 0.3) * radius
                rings.append(ring_wkt(hx, hy, radius * 0.15, 3, 120, rng))
            fh.write("P%06d;%d;POLYGON (%s)\n" % (i, label, ", ".join(rings)))


def parse_polygon(wkt):
    body = wkt[wkt.index("((") + 1: wkt.rindex("))") + 1]
    rings = []
    for chunk in body.split("),"):
        chunk = chunk.strip().strip("()")
        ring = []
        for pair in chunk.split(","):
            x, y = pair.split()
            ring.append((float(x), float(y)))
        rings.append(ring)
    return rings


def rasterise(rings):
    xs = [p[0] for p in rings[0]]
    ys = [p[1] for p in rings[0]]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    scale = (GRID - 4) / max(x1 - x0, y1 - y0)
    img = Image.new("L", (GRID, GRID), 0)
    draw = ImageDraw.Draw(img)
    for i, ring in enumerate(rings):
        poly = [(2 + (x - x0) * scale, 2 + (y1 - y) * scale) for x, y in ring]
        draw.polygon(poly, fill=0 if i else 255, outline=128)
    # perimeter / area ratio channel, computed from the vector geometry
    area = 0.0
    perim = 0.0
    ring = rings[0]
    for (ax, ay), (bx, by) in zip(ring[:-1], ring[1:]):
        area += ax * by - bx * ay
        perim += math.hypot(bx - ax, by - ay)
    compact = 4 * math.pi * abs(area / 2) / (perim * perim)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    return np.stack([arr, np.full_like(arr, compact)], axis=-1)


def parcel_generator(path):
    def gen():
        while True:
            with open(path) as fh:
                next(fh)
                for line in fh:
                    _, label, geom = line.rstrip("\n").split(";", 2)
                    yield rasterise(parse_polygon(geom)), int(label)
    return gen


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((GRID, GRID, 2))
    x = keras.layers.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def make_dataset(path):
    ds = tf.data.Dataset.from_generator(
        parcel_generator(path),
        output_signature=(tf.TensorSpec((GRID, GRID, 2), tf.float32),
                          tf.TensorSpec((), tf.int32)))
    return ds.batch(BATCH)


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS,
                     callbacks=[timer], shuffle=False, verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(SEED)
    tmp = tempfile.mkdtemp(prefix="u42_input_wkt_rasterize_fromgen_parcels_")
    try:
        path = os.path.join(tmp, "parcels.csv")
        write_parcels(path, rng)
        full, loss = train(make_dataset(path))
        emit({"steps_per_second": 1.0 / full})
        msg = "parcels: %.1f ms/step loss=%.3f" % (full * 1e3, loss)
        if truth:
            batch = next(iter(make_dataset(path)))
            compute, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(1.0, max(0.0, (full - compute) / full))
            emit({"truth_input_fraction": frac})
            msg += " compute=%.1f ms/step truth_input_fraction=%.3f" % (compute * 1e3, frac)
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
