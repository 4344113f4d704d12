"""Dermoscopy lesion classifier trained with per-batch MixUp / CutMix done in NumPy.

The lesion crops are held in memory as uint8 arrays.  A Python generator
draws a random batch, converts to float, applies random flips / 90-degree
rotations per image, then either CutMix (random box pasted from a shuffled
partner, per image) or MixUp, producing soft labels; the generator is
passed straight to model.fit.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

SIZE = 96
CLASSES = 7
N_IMAGES = 2000
BATCH = 32
STEPS_PER_EPOCH = 80
EPOCHS = 3
FILTERS = 16


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self):
        gaps = [g for ts in self.epochs for g in np.diff(ts)]
        return float(np.mean(gaps[4:]))  # steps 5 onward


def report(**kv):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(kv) + "\n")


def make_lesions(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    images = np.empty((N_IMAGES, SIZE, SIZE, 3), np.uint8)
    labels = rng.integers(CLASSES, size=N_IMAGES)
    skin = np.array([205, 160, 135], np.float32)
    for i in range(N_IMAGES):
        cy, cx, r = rng.uniform(30, 66), rng.uniform(30, 66), rng.uniform(12, 30)
        mask = ((yy - cy) ** 2 + (xx - cx) ** 2 < r ** 2)[..., None]
        lesion = np.array([90 + 15 * labels[i], 60, 40], np.float32)
        img = np.where(mask, lesion, skin) + rng.normal(0, 12, (SIZE, SIZE, 3))
        images[i] = img.clip(0, 255).astype(np.uint8)
    return images, labels


def augmented_batches(images, labels, rng):
    eye = np.eye(CLASSES, dtype=np.float32)
    mean = np.array([0.6, 0.45, 0.4], np.float32)
    std = np.array([0.2, 0.2, 0.2], np.float32)
    while True:
        idx = rng.integers(len(images), size=BATCH)
        x = (images[idx].astype(np.float32) / 255.0 - mean) / std
        y = eye[labels[idx]]
        for i in range(BATCH):
            if rng.random() < 0.5:
                x[i] = x[i, :, ::-1]
            x[i] = np.rot90(x[i], k=int(rng.integers(4)))
        perm = rng.permutation(BATCH)
        if rng.random() < 0.5:  # CutMix, one box per image
            out = x.copy()
            lam = rng.beta(1.0, 1.0, size=BATCH).astype(np.float32)
            for i in range(BATCH):
                h = int(SIZE * np.sqrt(1 - lam[i]))
                cy, cx = rng.integers(SIZE), rng.integers(SIZE)
                y0, y1 = max(cy - h // 2, 0), min(cy + h // 2, SIZE)
                x0, x1 = max(cx - h // 2, 0), min(cx + h // 2, SIZE)
                out[i, y0:y1, x0:x1] = x[perm[i], y0:y1, x0:x1]
                lam[i] = 1 - (y1 - y0) * (x1 - x0) / (SIZE * SIZE)
            y = lam[:, None] * y + (1 - lam[:, None]) * y[perm]
            x = out
        else:  # MixUp
            lam = rng.beta(0.4, 0.4, size=(BATCH, 1, 1, 1)).astype(np.float32)
            x = lam * x + (1 - lam) * x[perm]
            y = lam[:, :, 0, 0] * y + (1 - lam[:, :, 0, 0]) * y[perm]
        # colour jitter per image
        x = x * rng.uniform(0.8, 1.2, (BATCH, 1, 1, 3)).astype(np.float32)
        yield np.ascontiguousarray(x), y


def build_model():
    keras.utils.set_random_seed(5)
    model = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(FILTERS, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(FILTERS * 2, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(FILTERS * 4, 3, strides=2, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(CLASSES, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[clock], verbose=0)
    return clock.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    images, labels = make_lesions(np.random.default_rng(0))
    t0 = time.perf_counter()
    full = train(augmented_batches(images, labels, np.random.default_rng(1)))
    report(steps_per_second=1.0 / full)
    msg = f"skin lesions: {full * 1e3:.1f} ms/step, {1.0 / full:.2f} steps/s"
    if args.truth:
        batch = next(augmented_batches(images, labels, np.random.default_rng(2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report(truth_input_fraction=frac)
        msg += f", compute-only {compute * 1e3:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
