"""Crop-type segmentation-lite: classify multispectral satellite field patches.

Batches are prepared ahead of time on a small thread pool.
"""

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tensorflow as tf
import keras

PATCH = 32
BANDS = 6
N_CLASSES = 7
BATCH_SIZE = 64
STEPS = 50
N_SCENES = 40
SCENE = 256


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())


def append_result(**values):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(values) + "\n")


def make_scenes(rng):
    scenes = rng.gamma(2.0, 400.0, (N_SCENES, SCENE, SCENE, BANDS)).astype(np.float32)
    cloud = rng.random((N_SCENES, SCENE, SCENE)) < 0.03
    scenes[cloud] = 9000.0
    labels = rng.integers(0, N_CLASSES, (N_SCENES, SCENE // PATCH, SCENE // PATCH))
    return scenes, labels


def prepare_patch(scenes, labels, rng):
    s = int(rng.integers(N_SCENES))
    gy, gx = rng.integers(0, SCENE // PATCH, 2)
    patch = scenes[s, gy * PATCH : (gy + 1) * PATCH, gx * PATCH : (gx + 1) * PATCH].copy()
    # per-row cloud masking and gap filling
    for r in range(PATCH):
        row = patch[r]
        for b in range(BANDS):
            band = row[:, b]
            bad = band > 5000
            if bad.any():
                good = band[~bad]
                band[bad] = good.mean() if good.size else 0.0
    red, nir = patch[..., 2], patch[..., 3]
    ndvi = (nir - red) / (nir + red + 1e-6)
    patch = np.log1p(patch)
    mean = [patch[..., b].mean() for b in range(BANDS)]
    std = [patch[..., b].std() + 1e-6 for b in range(BANDS)]
    patch = (patch - np.asarray(mean)) / np.asarray(std)
    if rng.random() < 0.5:
        patch, ndvi = patch[:, ::-1], ndvi[:, ::-1]
    k = int(rng.integers(4))
    patch, ndvi = np.rot90(patch, k), np.rot90(ndvi, k)
    x = np.concatenate([patch, ndvi[..., None]], axis=-1).astype(np.float32)
    return x, int(labels[s, gy, gx])


def make_batch(scenes, labels, seed):
    rng = np.random.default_rng(seed)
    items = [prepare_patch(scenes, labels, rng) for _ in range(BATCH_SIZE)]
    return np.stack([i[0] for i in items]), np.asarray([i[1] for i in items])


def prefetching_batches(scenes, labels, ahead=4):
    with ThreadPoolExecutor(max_workers=2) as pool:
        seed = 0
        pending = []
        while True:
            while len(pending) < ahead:
                pending.append(pool.submit(make_batch, scenes, labels, seed))
                seed += 1
            yield pending.pop(0).result()


def build_model():
    inputs = keras.Input(shape=(PATCH, PATCH, BANDS + 1))
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, epochs=1, steps_per_epoch=STEPS, callbacks=[clock], verbose=0)
    return float(np.mean(np.diff(clock.times)[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    scenes, labels = make_scenes(np.random.default_rng(0))
    full = train(prefetching_batches(scenes, labels))
    append_result(steps_per_second=1.0 / full)
    msg = f"cropfields: {1.0 / full:.2f} steps/s over {STEPS} steps of {BATCH_SIZE}"

    if args.truth:
        batch = make_batch(scenes, labels, seed=12345)
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result(truth_input_fraction=frac)
        msg += f", truth_input_fraction={frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
