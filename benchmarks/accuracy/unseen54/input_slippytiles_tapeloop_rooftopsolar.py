"""Rooftop-solar detection from a slippy-map (z/x/y.png) tile pyramid.

A synthetic zoom-15 orthophoto tile cache is written as z/x/y.png files.  Each
training sample is a surveyed lat/lon point: the loop projects it to Web
Mercator tile coordinates, opens the 3x3 neighbourhood of PNG tiles with PIL,
stitches the mosaic and crops a window centred on the point.  Batches are built
in Python and fed to a @tf.function GradientTape step.
"""
import json
import math
import os
import shutil
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageDraw

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

ZOOM = 15
TILE = 128
CROP = 96
GRID = 12
BATCH = 32
STEPS = 110
LAT0, LON0 = 47.3769, 8.5417


def deg2tile(lat, lon, z):
    n = 2 ** z
    x = (lon + 180.0) / 360.0 * n
    y = (1.0 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2.0 * n
    return x, y


def tile2deg(x, y, z):
    n = 2 ** z
    lon = x / n * 360.0 - 180.0
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y / n))))
    return lat, lon


def write_tiles(root, rng):
    tx0, ty0 = (int(v) for v in deg2tile(LAT0, LON0, ZOOM))
    panels = []
    for i in range(GRID):
        for j in range(GRID):
            tx, ty = tx0 + i, ty0 + j
            img = Image.new("RGB", (TILE, TILE), (int(rng.integers(70, 110)), 110, 70))
            d = ImageDraw.Draw(img)
            for _ in range(5):
                x, y = rng.integers(0, TILE - 30, 2)
                w, h = rng.integers(14, 30, 2)
                d.rectangle([x, y, x + w, y + h], fill=(150, 90, 80))
                if rng.random() < 0.45:
                    d.rectangle([x + 3, y + 3, x + w - 3, y + h // 2], fill=(30, 40, 90))
                    panels.append((tx + (x + w / 2) / TILE, ty + (y + h / 4) / TILE))
            arr = np.asarray(img, np.int16) + rng.integers(-10, 10, (TILE, TILE, 3))
            os.makedirs(os.path.join(root, str(ZOOM), str(tx)), exist_ok=True)
            Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(
                os.path.join(root, str(ZOOM), str(tx), f"{ty}.png"))
    return tx0, ty0, np.array(panels)


def survey_points(tx0, ty0, panels, rng, n):
    pts = []
    for k in range(n):
        if k % 2 == 0:
            fx, fy = panels[rng.integers(len(panels))] + rng.normal(0, 0.02, 2)
        else:
            fx, fy = tx0 + 1 + rng.random() * (GRID - 2), ty0 + 1 + rng.random() * (GRID - 2)
        fx = float(np.clip(fx, tx0 + 1.01, tx0 + GRID - 1.01))
        fy = float(np.clip(fy, ty0 + 1.01, ty0 + GRID - 1.01))
        lat, lon = tile2deg(fx, fy, ZOOM)
        near = np.min(np.hypot(panels[:, 0] - fx, panels[:, 1] - fy)) * TILE < 6
        pts.append((lat, lon, int(near)))
    return pts


def chip(root, lat, lon):
    fx, fy = deg2tile(lat, lon, ZOOM)
    cx, cy = int(fx), int(fy)
    mosaic = Image.new("RGB", (3 * TILE, 3 * TILE))
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            with Image.open(os.path.join(root, str(ZOOM), str(cx + dx), f"{cy + dy}.png")) as t:
                mosaic.paste(t.convert("RGB"), ((dx + 1) * TILE, (dy + 1) * TILE))
    px = int((fx - cx + 1) * TILE) - CROP // 2
    py = int((fy - cy + 1) * TILE) - CROP // 2
    a = np.asarray(mosaic.crop((px, py, px + CROP, py + CROP)), np.float32) / 127.5 - 1.0
    return a


def batches(root, pts, rng):
    while True:
        idx = rng.integers(0, len(pts), BATCH)
        xs = np.stack([chip(root, pts[i][0], pts[i][1]) for i in idx])
        ys = np.array([pts[i][2] for i in idx], np.float32)[:, None]
        yield xs, ys


def build_model():
    return keras.Sequential([
        keras.Input((CROP, CROP, 3)),
        keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(1),
    ])


def train(next_batch):
    keras.utils.set_random_seed(9)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times = []
    for _ in range(STEPS):
        x, y = next_batch()
        loss = float(step(x, y))
        times.append(time.perf_counter())
    gaps = np.diff(times)[5:]
    return float(np.mean(gaps)), loss


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_input_slippytiles_tapeloop_rooftopsolar_")
    try:
        rng = np.random.default_rng(54)
        tx0, ty0, panels = write_tiles(tmp, rng)
        pts = survey_points(tx0, ty0, panels, rng, 3000)
        gen = batches(tmp, pts, np.random.default_rng(1))
        full, loss = train(lambda: next(gen))
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            fixed = next(gen)
            comp, _ = train(lambda: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"input_slippytiles_tapeloop_rooftopsolar: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
