"""Fabric-roll inspection defect classifier.

Greyscale patches from a fabric-roll inspection camera (twill and plain
weaves, with holes, slubs, oil stains and broken picks) are synthesised up
front, held in memory, and streamed with from_tensor_slices + prefetch into
model.fit on a convolutional network.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json

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


SEED = 8505
BATCH = 64
STEPS_PER_EPOCH = 65
EPOCHS = 3
PATCH = 64
N_PATCHES = 3072
DEFECTS = ["ok", "hole", "slub", "oil_stain", "broken_pick"]

rng = np.random.default_rng(SEED)
keras.utils.set_random_seed(SEED)


def make_patches():
    yy, xx = np.mgrid[0:PATCH, 0:PATCH].astype(np.float32)
    period = rng.uniform(3.0, 6.0, size=(N_PATCHES, 1, 1)).astype(np.float32)
    twill = rng.random((N_PATCHES, 1, 1)) < 0.5
    weave = np.where(twill, np.sin((xx + yy) * 2 * np.pi / period), np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period))
    img = 0.5 + 0.2 * weave + rng.normal(0, 0.05, size=(N_PATCHES, PATCH, PATCH))
    labels = rng.integers(0, len(DEFECTS), size=N_PATCHES)
    cy = rng.integers(12, PATCH - 12, size=N_PATCHES)
    cx = rng.integers(12, PATCH - 12, size=N_PATCHES)
    for i in np.nonzero(labels == 1)[0]:
        img[i][(yy - cy[i]) ** 2 + (xx - cx[i]) ** 2 < 20] = 0.05
    for i in np.nonzero(labels == 2)[0]:
        img[i, cy[i] - 2:cy[i] + 2, :] += 0.3
    for i in np.nonzero(labels == 3)[0]:
        img[i] -= 0.25 * np.exp(-((yy - cy[i]) ** 2 + (xx - cx[i]) ** 2) / 60.0)
    for i in np.nonzero(labels == 4)[0]:
        img[i, :, cx[i]:cx[i] + 2] = 0.5
    return img[..., None].astype(np.float32), labels.astype(np.int32)


PATCHES, LABELS = make_patches()


def build_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input((PATCH, PATCH, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(len(DEFECTS)),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


class StepTimer(keras.callbacks.Callback):
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


def train(ds):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    ds = (tf.data.Dataset.from_tensor_slices((PATCHES, LABELS))
          .shuffle(1024, seed=SEED).batch(BATCH, drop_remainder=True).repeat()
          .prefetch(tf.data.AUTOTUNE))
    spf, loss = train(ds)
    emit({"steps_per_second": 1.0 / spf})
    line = f"fabricroll: {EPOCHS}x{STEPS_PER_EPOCH} steps, {spf*1000:.1f} ms/step, loss {loss:.3f}"
    if TRUTH:
        batch = (tf.constant(PATCHES[:BATCH]), tf.constant(LABELS[:BATCH]))
        spc, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((spf - spc) / spf, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f", compute-only {spc*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", total {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
