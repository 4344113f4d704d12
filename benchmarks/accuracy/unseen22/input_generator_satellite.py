"""Land-cover classification of satellite tiles stored as base64 PNGs in a JSON-lines file."""

import argparse
import base64
import io
import json
import os
import shutil
import tempfile
import time

import numpy as np
from PIL import Image

import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=70)
parser.add_argument("--batch-size", type=int, default=64)
args = parser.parse_args()

TILE = 64
NUM_CLASSES = 10
NUM_TILES = 1200
BATCH = args.batch_size
STEPS = args.steps


def write_tiles(path, n, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(n):
            label = int(rng.integers(NUM_CLASSES))
            base = rng.integers(0, 255, size=(TILE // 8, TILE // 8, 3), dtype=np.uint8)
            tile = np.kron(base, np.ones((8, 8, 1), dtype=np.uint8))
            tile = np.clip(tile + rng.integers(0, 30, tile.shape), 0, 255).astype(np.uint8)
            buf = io.BytesIO()
            Image.fromarray(tile).save(buf, format="PNG")
            rec = {
                "tile_id": f"T{i:06d}",
                "label": label,
                "png": base64.b64encode(buf.getvalue()).decode("ascii"),
            }
            f.write(json.dumps(rec) + "\n")


def tile_generator(path, batch_size):
    while True:
        xs, ys = [], []
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                img = Image.open(io.BytesIO(base64.b64decode(rec["png"]))).convert("RGB")
                arr = np.asarray(img, dtype=np.float32) / 255.0
                if np.random.rand() < 0.5:
                    arr = arr[:, ::-1, :]
                lo, hi = np.percentile(arr, [2, 98], axis=(0, 1))
                arr = np.clip((arr - lo) / (hi - lo + 1e-6), 0.0, 1.0)
                arr = (arr - arr.mean(axis=(0, 1))) / (arr.std(axis=(0, 1)) + 1e-6)
                xs.append(arr)
                ys.append(rec["label"])
                if len(xs) == batch_size:
                    yield np.stack(xs), np.array(ys, dtype=np.int32)
                    xs, ys = [], []


def build_model():
    inp = keras.Input((TILE, TILE, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(NUM_CLASSES)(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.durations[5:]))


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=STEPS, epochs=1, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def append_out(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    tmp = tempfile.mkdtemp(prefix="u22_input_generator_satellite_")
    try:
        path = os.path.join(tmp, "tiles.jsonl")
        write_tiles(path, NUM_TILES)
        full = train(tile_generator(path, BATCH))
        append_out({"steps_per_second": 1.0 / full})
        msg = f"satellite: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            xb, yb = next(tile_generator(path, BATCH))
            cached = tf.data.Dataset.from_tensors((xb, yb)).repeat()
            compute = train(cached)
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_out({"truth_input_fraction": frac})
            msg += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
