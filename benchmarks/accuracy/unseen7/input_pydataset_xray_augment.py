"""Pneumonia vs normal classifier on (synthetic) chest X-ray crops.

Images live in a uint8 array in memory; a keras.utils.PyDataset does the usual
numpy augmentation per sample (random crop, flip, small shift, gamma, contrast,
speckle noise, cutout) inside __getitem__.
"""

import argparse
import json
import math
import os
import time

import keras
import numpy as np
import tensorflow as tf
from scipy import ndimage

IMG = 64
PAD = 8
BATCH_SIZE = 32
EPOCHS = 7
N_TRAIN = 3200
N_VAL = 320
SEED = 7


def synth_xrays(n, rng):
    """Blobby lung fields; 'pneumonia' images get bright patchy opacities."""
    yy, xx = np.mgrid[0 : IMG + 2 * PAD, 0 : IMG + 2 * PAD].astype(np.float32)
    size = IMG + 2 * PAD
    imgs = np.empty((n, size, size), dtype=np.uint8)
    labels = rng.integers(0, 2, size=n).astype(np.float32)
    for i in range(n):
        base = 60 + 40 * np.exp(-(((xx - size * 0.3) / 12) ** 2 + ((yy - size / 2) / 22) ** 2))
        base += 40 * np.exp(-(((xx - size * 0.7) / 12) ** 2 + ((yy - size / 2) / 22) ** 2))
        if labels[i]:
            for _ in range(rng.integers(2, 5)):
                cx, cy = rng.uniform(15, size - 15, size=2)
                base += 70 * np.exp(-(((xx - cx) / 6) ** 2 + ((yy - cy) / 6) ** 2))
        base += rng.normal(0, 8, size=base.shape)
        imgs[i] = np.clip(base, 0, 255).astype(np.uint8)
    return imgs, labels


class XrayBatches(keras.utils.PyDataset):
    def __init__(self, images, labels, batch_size, augment=True, seed=0, **kwargs):
        super().__init__(**kwargs)
        self.images = images
        self.labels = labels
        self.batch_size = batch_size
        self.augment = augment
        self.rng = np.random.default_rng(seed)
        self.order = np.arange(len(images))

    def __len__(self):
        return math.ceil(len(self.images) / self.batch_size)

    def _augment_one(self, img):
        r = self.rng
        top, left = r.integers(0, 2 * PAD + 1, size=2)
        out = img[top : top + IMG, left : left + IMG].astype(np.float32) / 255.0
        if r.random() < 0.5:
            out = out[:, ::-1]
        if r.random() < 0.3:
            out = np.roll(out, r.integers(-3, 4), axis=0)
        if r.random() < 0.3:
            out = ndimage.rotate(out, r.uniform(-10, 10), reshape=False, order=1, mode="nearest")
        # CLAHE-lite: global histogram equalisation
        hist, edges = np.histogram(out, bins=64, range=(0.0, 1.0))
        cdf = np.cumsum(hist).astype(np.float32)
        cdf /= cdf[-1]
        out = np.interp(out.ravel(), edges[:-1], cdf).reshape(out.shape).astype(np.float32)
        gamma = r.uniform(0.7, 1.4)
        out = np.power(out, gamma)
        mean = out.mean()
        out = (out - mean) * r.uniform(0.8, 1.25) + mean
        out = out * (1.0 + r.normal(0, 0.05, size=out.shape))  # speckle
        if r.random() < 0.5:
            cy, cx = r.integers(0, IMG - 12, size=2)
            out[cy : cy + 12, cx : cx + 12] = 0.0
        out = np.clip(out, 0.0, 1.0)
        # simple 3x3 smoothing (detector blur)
        padded = np.pad(out, 1, mode="edge")
        out = sum(padded[dy : dy + IMG, dx : dx + IMG] for dy in range(3) for dx in range(3)) / 9.0
        return out

    def __getitem__(self, idx):
        ids = self.order[idx * self.batch_size : (idx + 1) * self.batch_size]
        if self.augment:
            x = np.stack([self._augment_one(self.images[i]) for i in ids])
        else:
            x = self.images[ids, PAD : PAD + IMG, PAD : PAD + IMG].astype(np.float32) / 255.0
        return x[..., None], self.labels[ids]

    def on_epoch_end(self):
        self.rng.shuffle(self.order)


def build_cnn():
    model = keras.Sequential(
        [
            keras.Input((IMG, IMG, 1)),
            keras.layers.Conv2D(16, 5, strides=2, activation="relu", padding="same"),
            keras.layers.Conv2D(32, 3, strides=2, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(48, 3, activation="relu", padding="same"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer="adam",
        loss="binary_crossentropy",
        metrics=["accuracy", keras.metrics.AUC(name="auc")],
    )
    return model


class StepTimes(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.t = []

    def on_train_batch_end(self, batch, logs=None):
        self.t.append(time.perf_counter())


def mean_step(stamps, skip=5):
    return float(np.mean(np.diff(stamps[skip:])))


def emit(**kw):
    dest = os.environ.get("ACCURACY_OUT")
    if dest:
        with open(dest, "a") as f:
            for k, v in kw.items():
                f.write(json.dumps({k: v}) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--truth", action="store_true")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    args = ap.parse_args()

    rng = np.random.default_rng(SEED)
    x_train, y_train = synth_xrays(N_TRAIN, rng)
    x_val, y_val = synth_xrays(N_VAL, rng)
    train_seq = XrayBatches(x_train, y_train, BATCH_SIZE, augment=True, seed=1, workers=1)
    val_seq = XrayBatches(x_val, y_val, 64, augment=False)

    model = build_cnn()
    early = keras.callbacks.EarlyStopping(
        monitor="val_auc", mode="max", patience=3, restore_best_weights=True
    )
    t0 = time.perf_counter()
    hist = model.fit(
        train_seq, validation_data=val_seq, epochs=args.epochs, callbacks=[early], verbose=2
    )
    train_time = time.perf_counter() - t0
    n_steps = len(hist.history["loss"]) * len(train_seq)
    print(f"{n_steps} steps in {train_time:.1f}s -> {n_steps / train_time:.2f} steps/s")
    emit(steps_per_second=n_steps / train_time)
    print("val:", model.evaluate(val_seq, verbose=0, return_dict=True))

    if args.truth:
        full_t = StepTimes()
        model.fit(
            XrayBatches(x_train, y_train, BATCH_SIZE, seed=2, workers=1),
            epochs=args.epochs,
            verbose=0,
            callbacks=[full_t],
        )
        one_batch = train_seq[0]
        cached = tf.data.Dataset.from_tensors(one_batch).repeat()
        comp_t = StepTimes()
        model.fit(
            cached,
            epochs=args.epochs,
            steps_per_epoch=len(train_seq),
            verbose=0,
            callbacks=[comp_t],
        )
        full, comp = mean_step(full_t.t), mean_step(comp_t.t)
        frac = float(np.clip((full - comp) / full, 0.0, 1.0))
        print(
            f"truth: full {full * 1e3:.1f} ms/step  compute {comp * 1e3:.1f} ms/step  input share {frac:.3f}"
        )
        emit(truth_input_fraction=frac)
