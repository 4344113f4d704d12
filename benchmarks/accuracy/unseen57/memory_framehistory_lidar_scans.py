"""Autonomous driving: classify road-scene type from LiDAR sweeps rasterised to bird's-eye view.

A Python generator (tf.data.Dataset.from_generator, model.fit) synthesises each LiDAR
sweep as an (N, 4) point cloud, voxelises it into a bird's-eye-view height/intensity grid
with np.histogram2d, and - the bug - appends the raw float64 points and the grid of every
frame to a module-level "debug replay" history that is never trimmed. Resident memory
climbs by roughly 11 MB per step for the whole run; the model itself is small.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
N_POINTS = 8192
GRID = 96
CH = 6
BATCH = 16
STEPS = 40
EPOCHS = 3
N_CLASSES = 4  # highway, urban, parking, tunnel
DEBUG_REPLAY = []  # grows forever: every decoded frame is kept "for later inspection"


def lidar_frames(seed):
    rng = np.random.default_rng(seed)
    edges = np.linspace(-40, 40, GRID + 1)
    while True:
        cls = int(rng.integers(N_CLASSES))
        pts = rng.standard_normal((N_POINTS, 4)) * (10 + 5 * cls, 6 + 8 * (cls == 1), 1.5, 0.3)
        pts[:, 3] = np.abs(pts[:, 3]) + 0.2 * cls
        grid = np.empty((GRID, GRID, CH), np.float32)
        cnt, _, _ = np.histogram2d(pts[:, 0], pts[:, 1], bins=(edges, edges))
        zsum, _, _ = np.histogram2d(pts[:, 0], pts[:, 1], bins=(edges, edges), weights=pts[:, 2])
        isum, _, _ = np.histogram2d(pts[:, 0], pts[:, 1], bins=(edges, edges), weights=pts[:, 3])
        grid[..., 0] = np.log1p(cnt)
        grid[..., 1] = zsum / np.maximum(cnt, 1)
        grid[..., 2] = isum / np.maximum(cnt, 1)
        grid[..., 3] = cnt > 0
        grid[..., 4] = np.linspace(-1, 1, GRID)[:, None]
        grid[..., 5] = np.linspace(-1, 1, GRID)[None, :]
        DEBUG_REPLAY.append({"points": pts, "bev": grid.astype(np.float64), "label": cls})
        yield grid, np.int32(cls)


def make_dataset():
    sig = (tf.TensorSpec((GRID, GRID, CH), tf.float32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(lambda: lidar_frames(5), output_signature=sig).batch(BATCH)


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


class MemoryLog(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(f"  epoch {epoch}: RSS {rss_mib():.0f} MiB, replay frames {len(DEBUG_REPLAY)}")


def build_model():
    m = keras.Sequential([
        keras.Input((GRID, GRID, CH)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, strides=2, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer, MemoryLog()], verbose=0)
    return sec_per_step(timer.gaps)


print(f"  start: RSS {rss_mib():.0f} MiB")
full = train(make_dataset().repeat())
emit({"steps_per_second": 1.0 / full})
print(f"memory_framehistory_lidar_scans: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, "
      f"RSS {rss_mib():.0f} MiB, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    batch = next(iter(make_dataset()))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    finish_truth(full, compute)
