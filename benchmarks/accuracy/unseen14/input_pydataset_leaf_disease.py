"""Plant leaf disease classifier: photos on disk, Pillow augmentation in a PyDataset."""

import argparse
import json
import math
import os
import shutil
import tempfile
import time

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter
import tensorflow as tf
import keras

N_IMAGES = 384
RAW_SIZE = 192
IMG_SIZE = 96
N_CLASSES = 5
BATCH_SIZE = 16
EPOCHS = 4
SEED = 17


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    p.add_argument("--epochs", type=int, default=EPOCHS)
    return p.parse_args()


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.durations = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        self.durations.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        d = self.durations[5:]
        return float(np.mean(d)) if d else float("nan")


def write_leaf_photos(folder, rng):
    items = []
    yy, xx = np.mgrid[0:RAW_SIZE, 0:RAW_SIZE]
    for i in range(N_IMAGES):
        label = i % N_CLASSES
        img = np.zeros((RAW_SIZE, RAW_SIZE, 3), dtype=np.float32)
        img[..., 1] = 120 + 60 * rng.random()
        img[..., 0] = 40 + 20 * label
        leaf = ((xx - 96) / 80.0) ** 2 + ((yy - 96) / 55.0) ** 2 < 1
        img[~leaf] = [200, 190, 170]
        for _ in range(3 + 4 * label):
            cy, cx = rng.integers(40, 150, 2)
            spot = (xx - cx) ** 2 + (yy - cy) ** 2 < rng.integers(9, 64)
            img[spot & leaf] = [110 + 20 * label, 80, 30]
        img += rng.normal(0, 8, img.shape)
        path = os.path.join(folder, f"class{label}", f"leaf_{i:05d}.png")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(path)
        items.append((path, label))
    return items


class LeafDataset(keras.utils.PyDataset):
    def __init__(self, items, batch_size, augment=True, seed=0, **kwargs):
        super().__init__(**kwargs)
        self.items = list(items)
        self.batch_size = batch_size
        self.augment = augment
        self.rng = np.random.default_rng(seed)
        self.rng.shuffle(self.items)

    def __len__(self):
        return math.ceil(len(self.items) / self.batch_size)

    def load(self, path):
        img = Image.open(path).convert("RGB")
        if self.augment:
            scale = self.rng.uniform(0.7, 1.0)
            w = int(RAW_SIZE * scale)
            x0, y0 = self.rng.integers(0, RAW_SIZE - w + 1, 2)
            img = img.crop((x0, y0, x0 + w, y0 + w))
            img = img.rotate(self.rng.uniform(-30, 30), resample=Image.BILINEAR)
            if self.rng.random() < 0.5:
                img = img.transpose(Image.FLIP_LEFT_RIGHT)
            img = ImageEnhance.Color(img).enhance(self.rng.uniform(0.7, 1.3))
            img = ImageEnhance.Brightness(img).enhance(self.rng.uniform(0.8, 1.2))
            img = ImageEnhance.Contrast(img).enhance(self.rng.uniform(0.8, 1.2))
            if self.rng.random() < 0.3:
                img = img.filter(ImageFilter.GaussianBlur(1.0))
        img = img.resize((IMG_SIZE, IMG_SIZE), Image.BICUBIC)
        return np.asarray(img, dtype=np.float32) / 255.0

    def __getitem__(self, idx):
        chunk = self.items[idx * self.batch_size : (idx + 1) * self.batch_size]
        x = np.stack([self.load(p) for p, _ in chunk])
        y = np.array([lab for _, lab in chunk], dtype=np.int32)
        return x, y

    def on_epoch_end(self):
        self.rng.shuffle(self.items)


def build_model():
    inp = keras.Input(shape=(IMG_SIZE, IMG_SIZE, 3))
    x = keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu")(inp)
    for filters in (32, 64, 96):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.3)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main():
    args = parse_args()
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    workdir = tempfile.mkdtemp(prefix="u14_input_pydataset_leaf_disease_")
    try:
        items = write_leaf_photos(workdir, rng)
        train_ds = LeafDataset(items, BATCH_SIZE, seed=SEED)
        print(f"{len(items)} leaf photos, {len(train_ds)} batches per epoch")

        model = build_model()
        clock = StepClock()
        t0 = time.perf_counter()
        hist = model.fit(train_ds, epochs=args.epochs, callbacks=[clock], verbose=0)
        full = clock.seconds_per_step()
        print(
            f"trained {len(clock.durations)} steps in {time.perf_counter() - t0:.1f}s, "
            f"acc={hist.history['accuracy'][-1]:.3f}"
        )
        out_path = os.environ.get("ACCURACY_OUT")
        if out_path:
            with open(out_path, "a") as f:
                f.write(json.dumps({"steps_per_second": 1.0 / full}) + "\n")

        if args.truth:
            batch = train_ds[0]
            cached = tf.data.Dataset.from_tensors(batch).repeat()
            model2 = build_model()
            clock2 = StepClock()
            model2.fit(
                cached,
                epochs=args.epochs,
                steps_per_epoch=len(train_ds),
                callbacks=[clock2],
                verbose=0,
            )
            compute = clock2.seconds_per_step()
            frac = min(1.0, max(0.0, (full - compute) / full))
            if out_path:
                with open(out_path, "a") as f:
                    f.write(json.dumps({"truth_input_fraction": frac}) + "\n")
            print(f"truth: full={full * 1000:.1f}ms compute={compute * 1000:.1f}ms frac={frac:.2f}")
        print(f"leaf CNN: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
