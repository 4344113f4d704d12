import time; T0 = time.perf_counter()
import json
import os
import sys
import shutil
import tempfile
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
        gaps = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(gaps) / len(gaps)


# Breed-photo thumbnails: 64x64 RGB thumbnails of dogs and cats (synthetic blobs
# with breed-dependent coat colour/texture) held in memory; model.fit on a
# tf.data.from_tensor_slices pipeline with prefetch. The conv net dominates.
NUM_IMAGES = 2048
SIZE = 64
NUM_BREEDS = 12
BATCH = 32
EPOCHS = 3
STEPS = 18


def make_thumbnails():
    rng = np.random.default_rng(83)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    labels = rng.integers(0, NUM_BREEDS, size=NUM_IMAGES)
    coats = rng.uniform(0, 1, size=(NUM_BREEDS, 3))
    imgs = np.empty((NUM_IMAGES, SIZE, SIZE, 3), dtype=np.float32)
    for i, b in enumerate(labels):
        cx, cy, r = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.7), rng.uniform(0.15, 0.35)
        mask = ((xx - cx) ** 2 + (yy - cy) ** 2 < r * r).astype(np.float32)
        stripes = 0.5 + 0.5 * np.sin((xx + yy) * (4 + b) * np.pi)
        imgs[i] = mask[..., None] * coats[b] * stripes[..., None] + rng.normal(0, 0.05, (SIZE, SIZE, 3))
    return imgs, labels.astype(np.int32)


def build_model():
    keras.utils.set_random_seed(83)
    inp = keras.Input((SIZE, SIZE, 3))
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(inp)
    for filters in (64, 96, 128):
        x = keras.layers.DepthwiseConv2D(3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(filters, 1, activation="relu")(x)
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(NUM_BREEDS)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(dataset):
    model = build_model()
    timer = StepTimer()
    model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


images, labels = make_thumbnails()
thumbs = (tf.data.Dataset.from_tensor_slices((images, labels))
          .shuffle(512, seed=1).repeat().batch(BATCH, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE))
full = train(thumbs)
emit({"steps_per_second": 1.0 / full})
summary = "breedthumbs in-memory fit: %.2f ms/step" % (full * 1000)
if TRUTH:
    fixed = (images[:BATCH], labels[:BATCH])
    compute = train(tf.data.Dataset.from_tensors(fixed).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    summary += ", fixed-batch %.2f ms/step, truth_input_fraction=%.3f" % (compute * 1000, frac)
print(summary + ", wall %.1f s" % (time.perf_counter() - T0))
