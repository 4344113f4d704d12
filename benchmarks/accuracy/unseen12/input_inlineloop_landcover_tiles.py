"""Land-cover segmentation of multispectral satellite tiles (water / forest / crop / urban).

A synthetic 4-band scene (B, G, R, NIR) and its label mask live in memory; every training
iteration cuts random tiles out of it, applies a per-band percentile stretch, flips/rotations and brightness jitter,
appends NDVI and a 3x3 NIR texture band and stacks the batch inline, then calls model.train_on_batch.

    python input_inlineloop_landcover_tiles.py [--truth]
"""

import argparse
import json
import os
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
import keras

SCENE = 2048
TILE = 64
BATCH_SIZE = 16
STEPS = 200
N_CLASSES = 4


def make_scene(seed=0):
    rng = np.random.default_rng(seed)
    # smooth random field -> class regions
    coarse = rng.random((SCENE // 64, SCENE // 64, N_CLASSES))
    field = np.kron(coarse, np.ones((64, 64, 1)))
    field += 0.15 * rng.random(field.shape)
    labels = field.argmax(-1).astype(np.uint8)
    signatures = np.array(
        [[60, 70, 40, 20], [30, 60, 35, 160], [70, 90, 80, 120], [120, 120, 125, 90]],
        dtype=np.float32,
    )
    bands = signatures[labels] + rng.normal(0, 8, size=(SCENE, SCENE, 4)).astype(np.float32)
    return np.clip(bands, 0, 255).astype(np.uint8), labels


def build_model():
    inp = keras.Input((TILE, TILE, 6))
    c1 = keras.layers.Conv2D(12, 3, padding="same", activation="relu")(inp)
    p1 = keras.layers.MaxPooling2D()(c1)
    c2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(p1)
    p2 = keras.layers.MaxPooling2D()(c2)
    b = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(p2)
    u2 = keras.layers.UpSampling2D()(b)
    d2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(
        keras.layers.Concatenate()([u2, c2])
    )
    u1 = keras.layers.UpSampling2D()(d2)
    d1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(
        keras.layers.Concatenate()([u1, c1])
    )
    out = keras.layers.Conv2D(N_CLASSES, 1, activation="softmax")(d1)
    model = keras.Model(inp, out, name="tiny_unet")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def run(scene, mask, cached=None, seed=0):
    keras.utils.set_random_seed(21)
    model = build_model()
    rng = np.random.default_rng(seed)
    times = []
    for step in range(STEPS):
        if cached is None:
            ys = rng.integers(0, SCENE - TILE, size=BATCH_SIZE)
            xs = rng.integers(0, SCENE - TILE, size=BATCH_SIZE)
            tiles, targets = [], []
            for y0, x0 in zip(ys, xs):
                img = scene[y0 : y0 + TILE, x0 : x0 + TILE].astype(np.float32)
                lo, hi = np.percentile(img, [2, 98], axis=(0, 1))  # per-band contrast stretch
                img = np.clip((img - lo) / (hi - lo + 1e-3), 0, 1)
                lab = mask[y0 : y0 + TILE, x0 : x0 + TILE]
                k = int(rng.integers(4))
                img, lab = np.rot90(img, k), np.rot90(lab, k)
                if rng.random() < 0.5:
                    img, lab = img[:, ::-1], lab[:, ::-1]
                img = img * rng.uniform(0.8, 1.2, size=(1, 1, 4)) + rng.normal(0, 0.02, img.shape)
                red, nir = img[..., 2], img[..., 3]
                ndvi = (nir - red) / (nir + red + 1e-6)
                nir_pad = np.pad(nir, 1, mode="reflect")
                texture = sliding_window_view(nir_pad, (3, 3)).std(axis=(-1, -2))
                tiles.append(np.concatenate([img, ndvi[..., None], texture[..., None]], axis=-1))
                targets.append(lab)
            x = np.stack(tiles).astype(np.float32)
            y = np.stack(targets).astype(np.int32)
        else:
            x, y = cached
        loss, acc = model.train_on_batch(x, y)
        times.append(time.perf_counter())
    return (times[-1] - times[4]) / (len(times) - 5), float(loss), float(acc), (x, y)


def save_json(entry):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(entry) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    scene, mask = make_scene()
    full, loss, acc, last_batch = run(scene, mask)
    save_json({"steps_per_second": 1 / full})
    msg = f"landcover: {STEPS} steps, {1 / full:.2f} steps/s, loss {loss:.3f}, pixel acc {acc:.3f}"
    if args.truth:
        compute, *_ = run(scene, mask, cached=last_batch)
        frac = float(np.clip((full - compute) / full, 0, 1))
        save_json({"truth_input_fraction": frac})
        msg += f", truth_input_fraction {frac:.3f}"
    print(msg)


if __name__ == "__main__":
    main()
