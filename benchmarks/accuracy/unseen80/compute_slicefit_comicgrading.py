"""Comic book grading: cover scans -> CGC-style grade bucket.

All cover crops (spine ticks, corner blunting, colour-breaking creases,
foxing) are synthesised into NumPy arrays up front; tf.data
from_tensor_slices -> shuffle -> batch -> prefetch feeds model.fit of a
convolutional grader. Compute-bound.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
from keras import layers

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


BATCH = 32
N_COVERS = 1280
EPOCHS = 3
H, W = 64, 48
GRADES = 10  # 0.5 .. 9.8 collapsed into 10 buckets


def synth_covers(n, seed):
    rng = np.random.default_rng(seed)
    grade = rng.integers(0, GRADES, size=n)
    art = rng.uniform(0.2, 0.9, size=(n, 1, 1, 3)).astype(np.float32)
    yy = np.linspace(0, 1, H, dtype=np.float32)[None, :, None, None]
    xx = np.linspace(0, 1, W, dtype=np.float32)[None, None, :, None]
    img = art + 0.15 * np.sin(12 * yy + 7 * xx + rng.uniform(0, 6, size=(n, 1, 1, 3)))
    defects = (GRADES - 1 - grade)[:, None, None, None] / (GRADES - 1)
    spine = (xx < 0.08) * defects * rng.uniform(0.2, 0.5, size=(n, H, 1, 1))
    corners = ((yy < 0.1) | (yy > 0.9)) * ((xx < 0.12) | (xx > 0.88)) * defects * 0.6
    foxing = (rng.random((n, H, W, 1)) < 0.03 * defects) * 0.4
    img = img - spine - corners + foxing + rng.normal(0, 0.03, size=(n, H, W, 3))
    return img.astype(np.float32), grade.astype(np.int32)


def build_model():
    inp = keras.Input((H, W, 3))
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(128, activation="relu")(x)
    out = layers.Dense(GRADES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
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


STEPS = N_COVERS // BATCH


def train(dataset):
    keras.utils.set_random_seed(21)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(dataset, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    x, y = synth_covers(N_COVERS, 1938)
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N_COVERS, seed=1)
          .batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))
    full, hist = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[comicgrading] normal run: {full * 1000:.1f} ms/step, "
          f"loss {hist['loss'][-1]:.3f}, acc {hist['accuracy'][-1]:.3f}, "
          f"wall so far {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
        compute, _ = train(fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        print(f"[comicgrading] truth: compute {compute * 1000:.1f} ms/step, "
              f"input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
