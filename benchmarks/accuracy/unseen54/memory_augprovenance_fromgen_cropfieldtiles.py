"""Crop-type segmentation-lite classifier on multispectral field tiles with an augmentation provenance log.

Synthetic six-band (RGB, NIR, two SWIR) field tiles are generated in memory and
augmented on the fly (flips, 90-degree rotations, per-band gain jitter and
cloud-shadow masks) in a Python generator that feeds model.fit through
tf.data.Dataset.from_generator.  For a reproducibility audit the generator
keeps float64 copies of every source and augmented batch and its parameters in a list
that is never trimmed, so resident memory climbs steadily as training runs.
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

H = W = 64
BANDS = 6
N_TILES = 512
N_CLASSES = 5
BATCH = 32
STEPS = 50
EPOCHS = 3

PROVENANCE = []  # (batch_id, params, source and augmented float64 batches) for the audit report


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self._last is not None:
            self.gaps.append(t - self._last)
        self._last = t

    def sec_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


def make_tiles(rng):
    ys = rng.integers(0, N_CLASSES, N_TILES)
    sig = rng.uniform(0.1, 0.6, (N_CLASSES, BANDS))
    yy, xx = np.mgrid[0:H, 0:W] / H
    xs = np.empty((N_TILES, H, W, BANDS), np.float32)
    for i, c in enumerate(ys):
        rows = np.sin(2 * np.pi * (yy * (4 + c) + rng.random()))[..., None]
        xs[i] = sig[c] + 0.05 * rows + rng.normal(0, 0.02, (H, W, BANDS))
    return xs, ys.astype(np.int64)


def augmented_batches(xs, ys, seed):
    rng = np.random.default_rng(seed)
    b = 0
    while True:
        idx = rng.integers(0, N_TILES, BATCH)
        k = int(rng.integers(0, 4))
        gain = rng.uniform(0.9, 1.1, BANDS)
        source = xs[idx].astype(np.float64)
        batch = np.rot90(source, k, axes=(1, 2)) * gain
        if rng.random() < 0.5:
            batch = batch[:, :, ::-1]
        cy, cx = rng.integers(0, H, 2)
        shadow = ((np.mgrid[0:H, 0:W][0] - cy) ** 2 + (np.mgrid[0:H, 0:W][1] - cx) ** 2) < 150
        batch = np.where(shadow[None, :, :, None], batch * 0.4, batch)
        PROVENANCE.append((b, {"idx": idx, "rot": k, "gain": gain, "shadow": (cy, cx)}, source, batch.copy()))
        b += 1
        yield batch.astype(np.float32), ys[idx]


def build_model():
    m = keras.Sequential([keras.Input((H, W, BANDS)),
                          keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                          keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
                          keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu"),
                          keras.layers.GlobalAveragePooling2D(),
                          keras.layers.Dense(N_CLASSES)])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(ds):
    keras.utils.set_random_seed(29)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.sec_per_step()


def rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_memory_augprovenance_fromgen_cropfieldtiles_")
    try:
        xs, ys = make_tiles(np.random.default_rng(54))
        sig = (tf.TensorSpec((BATCH, H, W, BANDS), tf.float32), tf.TensorSpec((BATCH,), tf.int64))
        ds = tf.data.Dataset.from_generator(lambda: augmented_batches(xs, ys, 6), output_signature=sig).prefetch(1)
        full = train(ds)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step, provenance {len(PROVENANCE)} batches, rss {rss_mib():.0f} MiB"
        if "--truth" in sys.argv:
            batch = next(iter(ds))
            comp = train(tf.data.Dataset.from_tensors(batch).repeat())
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"memory_augprovenance_fromgen_cropfieldtiles: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
