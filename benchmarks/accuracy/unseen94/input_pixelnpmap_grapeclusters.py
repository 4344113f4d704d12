import time; T0 = time.perf_counter()
import json
import os
import sys
import tempfile
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps only within an epoch."""

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

    def seconds_per_step(self):
        g = self.gaps[5:]
        return sum(g) / len(g)


# Grape-cluster photos: each record is a photo id; a tf.numpy_function (serial map,
# no parallel calls) renders the 64x64 RGB cluster from its id (berry disks on a
# leaf background), applies colour jitter + per-channel standardisation, and the
# CNN classifies ripeness (green / veraison / ripe).
IMG = 64
BATCH = 32
STEPS_PER_EPOCH = 70
EPOCHS = 3
SEED = 94
YY, XX = np.mgrid[0:IMG, 0:IMG].astype(np.float32)
RIPENESS_RGB = np.array([[0.55, 0.75, 0.30], [0.60, 0.35, 0.45], [0.30, 0.10, 0.30]], np.float32)


def render_cluster(photo_id):
    rng = np.random.default_rng(int(photo_id))
    label = int(photo_id) % 3
    img = np.empty((IMG, IMG, 3), np.float32)
    img[...] = np.array([0.25, 0.45, 0.20], np.float32) + 0.05 * rng.standard_normal((IMG, IMG, 3)).astype(np.float32)
    n_berries = rng.integers(25, 40)
    for _ in range(n_berries):
        cy = rng.normal(IMG * 0.45, IMG * 0.15)
        cx = rng.normal(IMG * 0.5, IMG * 0.12)
        r = rng.uniform(3.0, 5.5)
        d2 = (YY - cy) ** 2 + (XX - cx) ** 2
        mask = d2 < r * r
        shade = 1.0 - 0.5 * np.sqrt(d2[mask]) / r
        colour = RIPENESS_RGB[label] + rng.normal(0, 0.04, 3).astype(np.float32)
        img[mask] = colour[None, :] * shade[:, None]
    img *= rng.uniform(0.8, 1.2)  # exposure jitter
    img = (img - img.mean(axis=(0, 1))) / (img.std(axis=(0, 1)) + 1e-6)
    return img.astype(np.float32), np.int32(label)


def tf_render(photo_id):
    img, lab = tf.numpy_function(render_cluster, [photo_id], [tf.float32, tf.int32])
    img.set_shape((IMG, IMG, 3))
    lab.set_shape(())
    return img, lab


def make_dataset(seed):
    ids = np.arange(seed * 1000000, seed * 1000000 + BATCH * STEPS_PER_EPOCH, dtype=np.int64)
    ds = tf.data.Dataset.from_tensor_slices(ids).repeat().map(tf_render)
    return ds.batch(BATCH).prefetch(2)


def build_model():
    keras.utils.set_random_seed(SEED)
    m = keras.Sequential([
        keras.Input((IMG, IMG, 3)),
        keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(3, activation="softmax"),
    ])
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = run(make_dataset(SEED))
emit({"steps_per_second": 1.0 / full})
print("grape clusters numpy_function map: %.2f ms/step, %.1f steps/s, wall %.1f s"
      % (full * 1e3, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    one = next(iter(make_dataset(SEED + 1)))
    compute = run(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("truth: compute %.2f ms/step, input fraction %.3f" % (compute * 1e3, frac))
