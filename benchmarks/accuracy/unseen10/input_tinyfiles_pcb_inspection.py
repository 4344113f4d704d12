"""Solder-joint defect classification from thousands of tiny PGM files.

Automated optical inspection stations dump one 48x48 grayscale crop per solder joint
as a separate binary PGM file, with a small JSON sidecar holding the label. This
script first writes such a folder of synthetic crops (good joints, bridges, voids,
cold joints) to a temporary directory, then trains a small ConvNet with a hand-written
``tf.GradientTape`` loop in a ``@tf.function``. Batches come from a ``JointFolder``
class whose ``__getitem__`` opens, parses and equalises every file of the batch one by
one in Python.

Run ``python input_tinyfiles_pcb_inspection.py [--truth]``.
"""

import argparse
import json
import os
import shutil
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

SIZE = 48
CLASSES = ["good", "bridge", "void", "cold"]
N_FILES = 4000
BATCH = 64
STEPS = 250


def draw_joint(rng, kind):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    img = rng.normal(60, 12, size=(SIZE, SIZE))
    blob = np.exp(-((yy - 24) ** 2 + (xx - 24) ** 2) / rng.uniform(60, 120))
    img += 150 * blob
    if kind == 1:
        img[20:28, :] += 90
    elif kind == 2:
        cy, cx = rng.integers(16, 32, size=2)
        img -= 120 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 12.0)
    elif kind == 3:
        img += rng.normal(0, 45, size=(SIZE, SIZE)) * blob
    return np.clip(img, 0, 255).astype(np.uint8)


def write_dataset(folder, n_files, seed=0):
    """One PGM crop plus one JSON sidecar (label and board metadata) per joint."""
    rng = np.random.default_rng(seed)
    for i in range(n_files):
        kind = int(rng.integers(0, len(CLASSES)))
        stem = os.path.join(folder, f"joint_{i:05d}")
        with open(stem + ".pgm", "wb") as f:
            f.write(f"P5\n# aoi station 3\n{SIZE} {SIZE}\n255\n".encode())
            f.write(draw_joint(rng, kind).tobytes())
        meta = {
            "board": f"PCB-{rng.integers(1000, 9999)}",
            "x_mm": round(float(rng.uniform(0, 160)), 2),
            "y_mm": round(float(rng.uniform(0, 100)), 2),
            "label": CLASSES[kind],
        }
        with open(stem + ".json", "w") as f:
            json.dump(meta, f)


def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n", 4)
    header = [line for line in lines[:4] if not line.startswith(b"#")]
    width, height = (int(v) for v in header[1].split())
    pixels = np.frombuffer(data[-width * height :], np.uint8)
    return pixels.reshape(height, width)


def equalize(img):
    """Histogram equalisation, as the AOI vendor's viewer does it."""
    hist, _ = np.histogram(img, bins=256, range=(0, 256))
    cdf = hist.cumsum().astype(np.float32)
    cdf = (cdf - cdf.min()) / (cdf.max() - cdf.min() + 1e-6)
    return cdf[img]


class JointFolder:
    """Indexable batches of (images, labels) read straight from the PGM files."""

    def __init__(self, folder, batch_size, seed=0):
        names = sorted(n for n in os.listdir(folder) if n.endswith(".pgm"))
        self.files = [os.path.join(folder, n[:-4]) for n in names]
        self.batch_size = batch_size
        self.order = np.random.default_rng(seed).permutation(len(self.files))

    def __len__(self):
        return len(self.files) // self.batch_size

    def __getitem__(self, idx):
        idx = idx % len(self)
        picks = self.order[idx * self.batch_size : (idx + 1) * self.batch_size]
        images, labels = [], []
        for j in picks:
            stem = self.files[j]
            img = equalize(read_pgm(stem + ".pgm"))
            img = (img - img.mean()) / (img.std() + 1e-6)
            with open(stem + ".json") as f:
                meta = json.load(f)
            if np.random.rand() < 0.5:
                img = img[:, ::-1]
            images.append(img[..., None])
            labels.append(CLASSES.index(meta["label"]))
        return np.stack(images), np.array(labels, np.int32)


def build_model():
    return keras.Sequential(
        [
            keras.Input((SIZE, SIZE, 1)),
            keras.layers.Conv2D(16, 3, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(32, 3, activation="relu", padding="same"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, activation="relu", padding="same"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(len(CLASSES)),
        ]
    )


def run_training(get_batch, steps):
    """Custom training loop; returns mean seconds per step after the first 5."""
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = loss_fn(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    t_start = None
    for step in range(steps):
        if step == 5:
            t_start = time.perf_counter()
        images, labels = get_batch(step)
        loss = train_step(images, labels)
        loss = float(loss)
        if step % 40 == 0:
            print(f"  step {step:4d}  loss {loss:.4f}")
    return (time.perf_counter() - t_start) / (steps - 5)


def save_metric(**record):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()

    folder = tempfile.mkdtemp(prefix="aoi_joints_")
    try:
        write_dataset(folder, N_FILES)
        batches = JointFolder(folder, BATCH)
        full = run_training(batches.__getitem__, STEPS)
        save_metric(steps_per_second=1.0 / full)
        line = f"pcb inspection: {1.0 / full:.2f} steps/s"
        if args.truth:
            images, labels = batches[0]
            images, labels = tf.constant(images), tf.constant(labels)
            compute = run_training(lambda step: (images, labels), STEPS)
            fraction = min(1.0, max(0.0, (full - compute) / full))
            save_metric(truth_input_fraction=fraction)
            line += (
                f"; full {full * 1e3:.1f} ms vs compute {compute * 1e3:.1f} ms -> {fraction:.2f}"
            )
        print(line)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
