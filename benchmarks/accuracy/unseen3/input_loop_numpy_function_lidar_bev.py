# Tags LiDAR sweeps by scene (open road, urban canyon, parking lot, vegetation) with a
# hand-written training loop. Each sweep is a raw float32 .bin file (x, y, z, intensity per
# point). tf.data lists the files and a tf.numpy_function reads each one, drops the ground,
# and rasterises the rest into a bird's-eye-view grid (point count, max height, intensity).
import atexit
import itertools
import os
import shutil
import statistics
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf
from truth import SKIP_STEPS, TRUTH, report

GRID, RANGE, SCENES, BATCH = 64, 32.0, 4, 32
folder = tempfile.mkdtemp(prefix="sweeps-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)


def sweep(scene):
    ground = np.c_[rng.uniform(-40, 40, (9000, 2)), rng.normal(-1.7, 0.05, 9000)]
    boxes = []
    count = [3, 10, 25, 6][scene]
    for _ in range(count):
        if scene == 1:  # buildings along both sides
            cx, cy = rng.uniform(-35, 35), rng.choice([-1, 1]) * rng.uniform(10, 18)
            size, height = (rng.uniform(6, 14), 3), rng.uniform(8, 25)
        elif scene == 3:  # trees anywhere
            cx, cy = rng.uniform(-35, 35, 2)
            size, height = (2, 2), rng.uniform(4, 12)
        else:  # cars, on a road or in rows
            cx, cy = rng.uniform(-35, 35), rng.normal(0, 3 if scene == 0 else 12)
            size, height = (4.5, 1.8), 1.5
        n = int(300 * height)
        pts = np.c_[
            rng.uniform(cx - size[0] / 2, cx + size[0] / 2, n),
            rng.uniform(cy - size[1] / 2, cy + size[1] / 2, n),
            rng.uniform(-1.7, -1.7 + height, n),
        ]
        boxes.append(pts)
    xyz = np.concatenate([ground, *boxes])
    intensity = rng.uniform(0, 1, (len(xyz), 1))
    return np.hstack([xyz, intensity]).astype(np.float32)


for i in range(480):
    sweep(i % SCENES).tofile(os.path.join(folder, f"{i:06d}_s{i % SCENES}.bin"))


def bird_eye_view(path):
    points = np.fromfile(path.decode(), dtype=np.float32).reshape(-1, 4)
    points = points[points[:, 2] > -1.5]  # drop the ground
    keep = (np.abs(points[:, 0]) < RANGE) & (np.abs(points[:, 1]) < RANGE)
    points = points[keep]
    ix = ((points[:, 0] + RANGE) / (2 * RANGE) * GRID).astype(np.int64).clip(0, GRID - 1)
    iy = ((points[:, 1] + RANGE) / (2 * RANGE) * GRID).astype(np.int64).clip(0, GRID - 1)
    cell = ix * GRID + iy
    count = np.bincount(cell, minlength=GRID * GRID)
    height = np.full(GRID * GRID, -1.5)
    np.maximum.at(height, cell, points[:, 2])
    intensity = np.bincount(cell, weights=points[:, 3], minlength=GRID * GRID)
    grid = np.stack(
        [np.log1p(count), (height + 1.5) / 10, intensity / np.maximum(count, 1)], axis=-1
    )
    scene = int(path.decode().rsplit("_s", 1)[1][0])
    return grid.reshape(GRID, GRID, 3).astype(np.float32), np.int32(scene)


def load(path):
    grid, scene = tf.numpy_function(bird_eye_view, [path], [tf.float32, tf.int32])
    grid.set_shape((GRID, GRID, 3))
    scene.set_shape(())
    return grid, scene


def sweeps():
    files = tf.data.Dataset.list_files(os.path.join(folder, "*.bin"), shuffle=True, seed=3)
    return files.repeat().map(load).batch(BATCH).prefetch(2)


model = keras.Sequential(
    [
        keras.Input((GRID, GRID, 3)),
        keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(SCENES),
    ]
)
optimizer = keras.optimizers.RMSprop(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(grid, scene):
    with tf.GradientTape() as tape:
        logits = model(grid, training=True)
        loss = loss_fn(scene, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    accuracy.update_state(scene, logits)
    return loss


def run(batches, steps, skip=0):
    """Trains for ``steps`` steps; seconds per step from step ``skip`` on."""
    accuracy.reset_state()
    for step, (grid, scene) in enumerate(itertools.islice(batches, steps)):
        if step == skip:
            start = time.perf_counter()
        loss = train_step(grid, scene)
    print(f"loss {float(loss):.3f} accuracy {float(accuracy.result()):.3f}")
    return (time.perf_counter() - start) / (steps - skip)


run(sweeps(), 3)
report(steps_per_second=1 / run(sweeps(), 160))
if TRUTH:
    one_batch = tf.data.Dataset.from_tensors(next(iter(sweeps()))).repeat()
    full, compute = [], []
    for _ in range(3):
        full.append(run(sweeps(), 40, SKIP_STEPS))
        compute.append(run(one_batch, 40, SKIP_STEPS))
    f, c = statistics.median(full), statistics.median(compute)
    report(
        truth_full_seconds=f,
        truth_compute_seconds=c,
        truth_input_wait_fraction=max(0.0, (f - c) / f),
    )
