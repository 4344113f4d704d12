"""Side-scan sonar contact classification (rock / wreck / pipeline / clutter).

Each sonar ping patch is stored as its own small compressed ``.npz`` file
(intensity patch plus metadata), the way a survey export lays them out. A
Python generator opens the files one by one, de-speckles and normalises the
patch, assembles batches and hands them straight to ``model.fit``.
"""
import argparse
import glob
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

H, W = 96, 96
BATCH = 32
STEPS_PER_EPOCH = 150
EPOCHS = 3
N_FILES = 1500


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


def write_patches(folder, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W]
    for i in range(N_FILES):
        label = int(rng.integers(4))
        patch = rng.gamma(2.0, 0.5, size=(H, W)).astype(np.float32)
        cy, cx = rng.integers(20, H - 20, 2)
        if label == 1:
            patch[cy - 8:cy + 8, cx - 15:cx + 15] += 3.0
        elif label == 2:
            patch[np.abs(yy - xx - (cy - cx)) < 3] += 2.0
        elif label == 3:
            patch += 2.5 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 60.0)
        np.savez_compressed(os.path.join(folder, f"ping_{i:05d}.npz"), intensity=patch,
                            label=label, heading=rng.uniform(0, 360), depth=rng.uniform(5, 80))


def despeckle(p):
    # 5x5 box mean then log compression
    pad = np.pad(p, 2, mode="edge")
    acc = np.zeros_like(p)
    for dy in range(5):
        for dx in range(5):
            acc += pad[dy:dy + H, dx:dx + W]
    p = np.log1p(acc / 25.0)
    return (p - p.mean()) / (p.std() + 1e-6)


def patch_batches(folder, seed=0):
    files = sorted(glob.glob(os.path.join(folder, "ping_*.npz")))
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(files))
        for k in range(0, len(order) - BATCH + 1, BATCH):
            xs, ys = [], []
            for j in order[k:k + BATCH]:
                with np.load(files[j]) as z:
                    xs.append(despeckle(z["intensity"]))
                    ys.append(int(z["label"]))
            yield np.stack(xs)[..., None].astype(np.float32), np.asarray(ys, np.int32)


def build_model():
    inp = keras.Input((H, W, 1))
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    for f in (16, 32):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(4)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(data):
    keras.utils.set_random_seed(1)
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="u29_sonar_")
    try:
        write_patches(folder)
        full = train(patch_batches(folder))
        report("steps_per_second", 1.0 / full)
        msg = f"sonar: {1.0 / full:.2f} steps/s"
        if args.truth:
            batch = next(patch_batches(folder))
            compute = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            report("truth_input_fraction", frac)
            msg += f", compute-only {1.0 / compute:.2f} steps/s, input fraction {frac:.3f}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
