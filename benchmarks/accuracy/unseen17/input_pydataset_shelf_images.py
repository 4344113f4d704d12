"""Retail shelf product classifier trained from JPEG/PNG crops on disk."""

import argparse
import json
import math
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras
from PIL import Image, ImageFilter, ImageOps

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--n-images", type=int, default=320)
args = parser.parse_args()

IMG_SIZE = 96
NUM_CLASSES = 12
STEPS_PER_EXECUTION = 2


def write_images(root, n):
    rng = np.random.default_rng(3)
    paths, labels = [], []
    for i in range(n):
        label = int(rng.integers(NUM_CLASSES))
        h, w = int(rng.integers(360, 460)), int(rng.integers(360, 500))
        base = np.zeros((h, w, 3), np.float32)
        base[..., label % 3] = 120 + 10 * label
        noise = rng.normal(0, 40, size=(h, w, 3))
        arr = np.clip(base + noise, 0, 255).astype(np.uint8)
        ext = "png" if i % 4 == 0 else "jpg"
        path = os.path.join(root, f"sku_{label:02d}_{i:05d}.{ext}")
        Image.fromarray(arr).save(path, quality=92)
        paths.append(path)
        labels.append(label)
    return paths, np.array(labels, np.int32)


class ShelfCrops(keras.utils.PyDataset):
    def __init__(self, paths, labels, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.paths = paths
        self.labels = labels
        self.batch_size = batch_size
        self.order = np.random.default_rng(0).permutation(len(paths))

    def __len__(self):
        return math.ceil(len(self.paths) / self.batch_size) * 1000

    def __getitem__(self, idx):
        n = len(self.paths)
        images, ys = [], []
        for k in range(self.batch_size):
            j = self.order[(idx * self.batch_size + k) % n]
            with Image.open(self.paths[j]) as im:
                im = im.convert("RGB")
                im = ImageOps.autocontrast(im)
                im = im.filter(ImageFilter.GaussianBlur(1))
                im = im.resize((IMG_SIZE, IMG_SIZE), Image.BILINEAR)
                images.append(np.asarray(im, np.float32) / 255.0)
            ys.append(self.labels[j])
        return np.stack(images), np.array(ys, np.int32)


def build_model():
    inp = keras.Input(shape=(IMG_SIZE, IMG_SIZE, 3))
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(NUM_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.stamps = []

    def on_train_batch_end(self, batch, logs=None):
        self.stamps.append(time.perf_counter())


def seconds_per_step(stamps, skip=5):
    # with steps_per_execution=2 the callback fires once per two steps
    skip_calls = max(1, skip // STEPS_PER_EXECUTION)
    gaps = np.diff(stamps)[skip_calls - 1 :]
    return float(np.mean(gaps)) / STEPS_PER_EXECUTION


def write_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=args.steps, epochs=1, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.stamps)


def main():
    tmp = tempfile.mkdtemp(prefix="u17_shelf_")
    try:
        t0 = time.time()
        paths, labels = write_images(tmp, args.n_images)
        print(f"wrote {len(paths)} shelf crops in {time.time() - t0:.1f}s")
        data = ShelfCrops(paths, labels, args.batch_size, workers=4, use_multiprocessing=False)
        full = train(data)
        write_result({"steps_per_second": 1.0 / full})
        msg = f"train: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"
        if args.truth:
            x, y = data[0]
            cached = tf.data.Dataset.from_tensors((x, y)).repeat()
            compute = train(cached)
            frac = min(1.0, max(0.0, (full - compute) / full))
            write_result({"truth_input_fraction": frac})
            msg += f" | cached batch {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
