"""Train a small CNN that classifies land cover in synthetic 4-band satellite tiles.

Data feeding: at start-up the script writes every tile as a raw uint16 ``.npy`` file into a
temporary directory. Each training step calls a plain function ``read_tiles(paths)`` that loads
the batch's files, then further statements of the loop augment the raw tiles in numpy (random
flips, 90-degree rotations, per-band gain and sensor noise), normalise them and convert them with
``tf.convert_to_tensor`` before the ``@tf.function`` train step (``tf.GradientTape``) runs.
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

TILE = 64
BANDS = 4
N_CLASSES = 6
N_TILES = 1024
BATCH_SIZE = 64
STEPS = 90
WARMUP = 5
LOG_EVERY = 20
BAND_MEAN = np.array([1200.0, 1100.0, 1000.0, 2500.0], dtype=np.float32)
BAND_STD = np.array([400.0, 380.0, 420.0, 800.0], dtype=np.float32)


def write_tiles(root, rng):
    paths, labels = [], []
    for k in range(N_TILES):
        label = int(rng.integers(N_CLASSES))
        tile = rng.normal(BAND_MEAN + 150.0 * label, BAND_STD, size=(TILE, TILE, BANDS))
        path = os.path.join(root, f"tile_{k:05d}.npy")
        np.save(path, np.clip(tile, 0, 10000).astype(np.uint16))
        paths.append(path)
        labels.append(label)
    return paths, np.array(labels, dtype=np.int32)


def read_tiles(paths):
    return np.stack([np.load(p) for p in paths])


def augment(raw, rng):
    out = np.empty(raw.shape, dtype=np.float32)
    for i, tile in enumerate(raw.astype(np.float32)):
        if rng.random() < 0.5:
            tile = tile[:, ::-1]
        if rng.random() < 0.5:
            tile = tile[::-1]
        tile = np.rot90(tile, k=int(rng.integers(4)))
        tile = tile * rng.uniform(0.9, 1.1, size=BANDS)
        tile = tile + rng.normal(0.0, 30.0, size=tile.shape)
        out[i] = tile
    return out


def build_model():
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(TILE, TILE, BANDS)),
            tf.keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
            tf.keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
            tf.keras.layers.GlobalAveragePooling2D(),
            tf.keras.layers.Dense(N_CLASSES),
        ]
    )


def train(paths, labels, cached_batch=None):
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    rng = np.random.default_rng(1)
    per_epoch = len(paths) // BATCH_SIZE
    order = np.arange(len(paths))
    losses, step_times = [], []
    for step in range(STEPS):
        t0 = time.perf_counter()
        i = step % per_epoch
        if i == 0:
            rng.shuffle(order)
        if cached_batch is None:
            idx = order[i * BATCH_SIZE : (i + 1) * BATCH_SIZE]
            raw = read_tiles([paths[j] for j in idx])
            x = augment(raw, rng)
            x = (x - BAND_MEAN) / BAND_STD
            x = tf.convert_to_tensor(x, dtype=tf.float32)
            y = tf.convert_to_tensor(labels[idx])
        else:
            x, y = cached_batch
        loss = train_step(x, y)
        losses.append(float(loss))
        if (step + 1) % LOG_EVERY == 0:
            print(f"step {step + 1:4d}  loss {losses[-1]:.4f}  mean {np.mean(losses):.4f}")
        step_times.append(time.perf_counter() - t0)
    return step_times


def append_result(record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truth", action="store_true", help="also measure input-wait fraction")
    args = parser.parse_args()

    tf.random.set_seed(0)
    with tempfile.TemporaryDirectory(prefix="tiles_") as root:
        paths, labels = write_tiles(root, np.random.default_rng(0))
        times = train(paths, labels)
        full = float(np.mean(times[WARMUP:]))
        append_result({"steps_per_second": 1.0 / full})
        summary = f"input_satellite_augment: {STEPS} steps, {1.0 / full:.2f} steps/s"

        if args.truth:
            x = (read_tiles(paths[:BATCH_SIZE]).astype(np.float32) - BAND_MEAN) / BAND_STD
            cached = (tf.convert_to_tensor(x), tf.convert_to_tensor(labels[:BATCH_SIZE]))
            times = train(paths, labels, cached)
            compute = float(np.mean(times[WARMUP:]))
            frac = min(1.0, max(0.0, (full - compute) / full))
            append_result({"truth_input_fraction": frac})
            summary += (
                f", full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms, truth {frac:.3f}"
            )
    print(summary)


if __name__ == "__main__":
    main()
