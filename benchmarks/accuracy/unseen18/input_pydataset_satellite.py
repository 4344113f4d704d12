"""Land-cover classification of multispectral satellite tiles (R, G, B, NIR)."""

import argparse
import json
import os
import time

import numpy as np
import keras

N_TILES = 1200
TILE = 96
BANDS = 4
N_CLASSES = 6
BATCH_SIZE = 32
STEPS = 120


class TileDataset(keras.utils.PyDataset):
    def __init__(self, tiles, labels, batch_size, seed=0, **kwargs):
        super().__init__(**kwargs)
        self.tiles = tiles
        self.labels = labels
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.tiles) // self.batch_size

    def _prepare(self, tile):
        x = tile.astype(np.float32)
        lo = np.percentile(x, 2, axis=(0, 1))
        hi = np.percentile(x, 98, axis=(0, 1))
        x = np.clip((x - lo) / (hi - lo + 1e-6), 0.0, 1.0)
        red, nir = x[..., 0], x[..., 3]
        ndvi = (nir - red) / (nir + red + 1e-6)
        local = np.zeros_like(ndvi)
        for dy in range(-2, 3):
            for dx in range(-2, 3):
                local += np.roll(np.roll(ndvi, dy, axis=0), dx, axis=1)
        texture = np.abs(ndvi - local / 25.0)
        x = np.concatenate([x, ndvi[..., None], texture[..., None]], axis=-1)
        x = np.rot90(x, k=int(self.rng.integers(4)))
        if self.rng.random() < 0.5:
            x = x[:, ::-1]
        gain = self.rng.uniform(0.9, 1.1, size=(1, 1, x.shape[-1]))
        return np.ascontiguousarray(x * gain, dtype=np.float32)

    def __getitem__(self, idx):
        sl = slice(idx * self.batch_size, (idx + 1) * self.batch_size)
        x = np.stack([self._prepare(t) for t in self.tiles[sl]])
        return x, self.labels[sl]


def make_tiles(rng):
    labels = rng.integers(0, N_CLASSES, N_TILES)
    base = rng.integers(0, 2000, size=(N_TILES, TILE, TILE, BANDS), dtype=np.int64)
    base[..., 3] += (labels[:, None, None] * 600).astype(np.int64)
    return base.astype(np.uint16), labels.astype(np.int32)


def build_model():
    model = keras.Sequential(
        [
            keras.Input(shape=(TILE, TILE, BANDS + 2)),
            keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(N_CLASSES, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(get_batch):
    model = build_model()
    times = []
    for step in range(STEPS):
        x, y = get_batch(step)
        loss, acc = model.train_on_batch(x, y)
        times.append(time.perf_counter())
        if step % 15 == 0:
            print(f"step {step:3d} loss {float(loss):.4f} acc {float(acc):.3f}")
    return float(np.mean(np.diff(times[4:])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(5)
    tiles, labels = make_tiles(rng)
    ds = TileDataset(tiles, labels, BATCH_SIZE, seed=1)
    print(f"{len(tiles)} tiles, {len(ds)} batches per epoch")

    sec = train(lambda step: ds[step % len(ds)])
    print(f"real input: {sec * 1000:.1f} ms/step")
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({"steps_per_second": 1.0 / sec}) + "\n")
    if args.truth:
        fixed = ds[0]
        csec = train(lambda step: fixed)
        frac = min(1.0, max(0.0, (sec - csec) / sec))
        print(f"cached batch: {csec * 1000:.1f} ms/step, input fraction {frac:.3f}")
        if out:
            with open(out, "a") as f:
                f.write(json.dumps({"truth_input_fraction": frac}) + "\n")


if __name__ == "__main__":
    main()
