import time; T0 = time.perf_counter()
"""Brass bell-flare defect classification, in-memory tf.data -> fit (compute-bound).

Repair techs photograph a trumpet / trombone bell straight down the flare under
a ring light before dent work. Synthetic 64x64 grey-scale photos are rendered
once up front with NumPy: concentric specular rings of the flare, a bright rim,
lacquer wear patches, dents (local ring distortion) or a seam split. All photos
sit in memory; tf.data.from_tensor_slices(...).shuffle.batch.prefetch feeds a
stacked VGG-style CNN that classifies the bell (clean / dented / lacquer worn /
split seam). The input pipeline is trivial; the convolutions dominate.
"""
import json
import os
import sys

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


SIZE = 64
BATCH = 32
STEPS_PER_EPOCH = 80
EPOCHS = 3
N_PHOTOS = BATCH * STEPS_PER_EPOCH


def render_bells(n, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    cx = SIZE / 2 + rng.normal(0, 2, size=(n, 1, 1))
    cy = SIZE / 2 + rng.normal(0, 2, size=(n, 1, 1))
    r = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
    theta = np.arctan2(yy - cy, xx - cx)
    label = rng.integers(0, 4, size=n)
    ring_freq = rng.uniform(0.5, 0.9, size=(n, 1, 1))
    dent = (label == 1)[:, None, None] * rng.uniform(1.5, 4.0, size=(n, 1, 1)) \
        * np.exp(-((theta - rng.uniform(-3, 3, size=(n, 1, 1))) ** 2) / 0.1)
    img = 0.5 + 0.4 * np.cos(ring_freq * (r + dent))
    img *= np.clip(1.0 - r / (SIZE * 0.5), 0, 1) ** 0.3
    img += 0.6 * np.exp(-((r - SIZE * 0.46) ** 2) / 4.0)             # rim highlight
    wear = (label == 2)[:, None, None] * np.exp(-((xx - rng.uniform(10, 54, (n, 1, 1))) ** 2
                                                  + (yy - rng.uniform(10, 54, (n, 1, 1))) ** 2) / 60.0)
    img = img * (1 - 0.6 * wear)
    split = (label == 3)[:, None, None] * (np.abs(theta - rng.uniform(-3, 3, (n, 1, 1))) < 0.04) * (r > 12)
    img = img - 0.7 * split
    img += rng.normal(0, 0.05, size=img.shape)
    return img[..., None].astype(np.float32), label.astype(np.int32)


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def build_model():
    inp = keras.Input(shape=(SIZE, SIZE, 1))
    x = inp
    for ch in (24, 48, 96):
        x = keras.layers.Conv2D(ch, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(ch, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


def train(ds):
    keras.utils.set_random_seed(21)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    photos, labels = render_bells(N_PHOTOS, 1924)
    ds = (tf.data.Dataset.from_tensor_slices((photos, labels))
          .shuffle(N_PHOTOS, seed=1).batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))
    sec, loss = train(ds)
    emit({"steps_per_second": 1.0 / sec})
    summary = f"bellflares in-memory fit: {EPOCHS}x{STEPS_PER_EPOCH} steps, {sec*1000:.1f} ms/step, loss {loss:.4f}"
    if TRUTH:
        batch = (photos[:BATCH], labels[:BATCH])
        csec, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((sec - csec) / sec, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        summary += f", compute-only {csec*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(summary + f", total {time.perf_counter() - T0:.1f}s")


if __name__ == "__main__":
    main()
