"""Land-cover classification of 4-band satellite tiles, trained with train_on_batch.

Usage: python input_trainonbatch_landcover.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np

import keras
from keras import layers

N_TILES = 3000
TILE = 72
CROP = 64
BANDS = 4
N_CLASSES = 8
BATCH_SIZE = 32
STEPS = 110
SEED = 21


def append_result(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def make_tiles(rng):
    labels = rng.integers(0, N_CLASSES, size=N_TILES)
    means = rng.uniform(40, 200, size=(N_CLASSES, BANDS))
    tiles = rng.normal(0, 25, size=(N_TILES, TILE, TILE, BANDS)) + means[labels][:, None, None, :]
    return tiles.clip(0, 255).astype(np.uint8), labels


def augment_batch(tiles, rng):
    out = np.empty((len(tiles), CROP, CROP, BANDS), dtype=np.float32)
    for i, tile in enumerate(tiles):
        img = tile.astype(np.float32)
        lo, hi = np.percentile(img, [2, 98], axis=(0, 1))
        img = np.clip((img - lo) / (hi - lo + 1e-6), 0.0, 1.0)
        img = img ** rng.uniform(0.8, 1.25)
        y0, x0 = rng.integers(0, TILE - CROP + 1, size=2)
        img = img[y0 : y0 + CROP, x0 : x0 + CROP]
        img = np.rot90(img, k=rng.integers(4))
        if rng.random() < 0.5:
            img = img[:, ::-1]
        gain = rng.uniform(0.85, 1.15, size=BANDS)
        img = img * gain + rng.normal(0, 0.02, size=img.shape)
        for b in range(BANDS):
            band = img[..., b]
            img[..., b] = (band - band.mean()) / (band.std() + 1e-6)
        out[i] = img
    return out


def build_model():
    inputs = keras.Input(shape=(CROP, CROP, BANDS))
    x = inputs
    for filters in (16, 32, 48):
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = layers.MaxPooling2D()(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(128, activation="relu")(x)
    outputs = layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="landcover_cnn")
    model.compile(
        optimizer=keras.optimizers.SGD(0.02, momentum=0.9),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def train(next_batch):
    keras.utils.set_random_seed(SEED)
    model = build_model()
    marks = []
    for step in range(STEPS):
        x, y = next_batch()
        loss, acc = model.train_on_batch(x, y)
        marks.append(time.perf_counter())
        if step % 30 == 0:
            print(f"step {step:3d}  loss {float(loss):.4f}  acc {float(acc):.3f}")
    return (marks[-1] - marks[4]) / (len(marks) - 5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(SEED)
    tiles, labels = make_tiles(rng)
    print(f"{N_TILES} tiles of {TILE}x{TILE}x{BANDS}")

    def next_batch():
        idx = rng.choice(N_TILES, size=BATCH_SIZE, replace=False)
        return augment_batch(tiles[idx], rng), labels[idx]

    full = train(next_batch)
    append_result({"steps_per_second": 1.0 / full})

    if args.truth:
        fixed = next_batch()
        compute = train(lambda: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        append_result({"truth_input_fraction": frac})
        print(
            f"summary: full {full * 1000:.1f} ms/step, cached {compute * 1000:.1f} ms/step, "
            f"input fraction {frac:.2f}"
        )
    else:
        print(f"summary: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s")


if __name__ == "__main__":
    main()
