"""Rooftop solar-panel detector trained on aerial JPEG tiles.

Each batch is decoded by a ThreadPoolExecutor: every worker opens one JPEG
tile with PIL, rotates it by a random angle, crops/resizes it and jitters the
colour, and a plain Python generator stacks the results for model.fit.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import tempfile
import time

import numpy as np
from PIL import Image, ImageEnhance
import tensorflow as tf
import keras

TILE = 304          # stored tile edge (pixels)
OUT = 96            # network input edge
N_TILES = 192
BATCH = 32
STEPS = 32
EPOCHS = 2
WORKERS = 4


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def write_tiles(root, rng):
    paths, labels = [], []
    for i in range(N_TILES):
        coarse = rng.integers(70, 190, size=(TILE // 16, TILE // 16, 3), dtype=np.uint8)
        arr = np.asarray(Image.fromarray(coarse).resize((TILE, TILE), Image.BILINEAR)).astype(np.int16)
        arr += rng.integers(-12, 12, size=arr.shape, dtype=np.int16)
        label = int(rng.random() < 0.45)
        if label:
            r, c = rng.integers(40, TILE - 120, size=2)
            arr[r:r + 70, c:c + 110] = (35, 45, 95)
        p = os.path.join(root, f"tile_{i:05d}.jpg")
        Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(p, quality=92)
        paths.append(p)
        labels.append(label)
    return paths, np.array(labels, dtype=np.float32)


def load_tile(args):
    path, seed = args
    rng = np.random.default_rng(seed)
    with Image.open(path) as im:
        im = im.convert("RGB")
        im = im.rotate(float(rng.uniform(-30, 30)), resample=Image.BICUBIC)
        off = int(rng.integers(0, TILE // 8))
        im = im.crop((off, off, TILE - off, TILE - off)).resize((OUT, OUT), Image.LANCZOS)
        im = ImageEnhance.Color(im).enhance(float(rng.uniform(0.8, 1.2)))
        im = ImageEnhance.Brightness(im).enhance(float(rng.uniform(0.85, 1.15)))
        return np.asarray(im, dtype=np.float32) / 255.0


def batch_generator(paths, labels, pool, seed):
    rng = np.random.default_rng(seed)
    while True:
        idx = rng.choice(len(paths), BATCH, replace=False)
        seeds = rng.integers(0, 2**31, size=BATCH)
        imgs = list(pool.map(load_tile, [(paths[i], int(s)) for i, s in zip(idx, seeds)]))
        yield np.stack(imgs), labels[idx]


def build_model():
    inp = keras.Input((OUT, OUT, 3))
    x = inp
    for f in (24, 48, 64):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    out = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    return model


def train(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.gaps), time.perf_counter() - t0, hist.history["loss"][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="u34_input_threadpool_pil_roofsolar_")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS)
    try:
        paths, labels = write_tiles(root, np.random.default_rng(1))
        full, wall, loss = train(batch_generator(paths, labels, pool, 7))
        emit({"steps_per_second": 1.0 / full})
        msg = f"roofsolar: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {loss:.4f}"
        if args.truth:
            one = next(batch_generator(paths, labels, pool, 99))
            ds = tf.data.Dataset.from_tensors(one).repeat()
            compute, _, _ = train(ds)
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
        print(msg)
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
