"""Leaf-grade photos (OP, BOP, BOPF, FBOP, Dust) -> grade class.

A keras.utils.PyDataset (workers=1) renders each batch on request: every
photo is painted particle by particle (grade sets particle size and count),
then colour-jittered, flipped and standardised in Python/NumPy.
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

BATCH = 32
STEPS = 100
EPOCHS = 3
SIDE = 64
GRADES = ["OP", "BOP", "BOPF", "FBOP", "DUST"]
PARTICLE_SCALE = 1.2


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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


def paint_leaf_photo(rng, grade):
    img = np.empty((SIDE, SIDE, 3), np.float32)
    img[...] = (0.82, 0.78, 0.70)                       # sorting tray background
    size = [9, 6, 4, 3, 2][grade]
    count = int([14, 24, 40, 55, 80][grade] * PARTICLE_SCALE)
    yy, xx = np.mgrid[-size:size + 1, -size:size + 1]
    for _ in range(count):
        cy, cx = rng.integers(size, SIDE - size, 2)
        ang = rng.uniform(0, np.pi)
        a = size * rng.uniform(0.7, 1.0)
        b = a * rng.uniform(0.25, 0.6)
        u = xx * np.cos(ang) + yy * np.sin(ang)
        v = -xx * np.sin(ang) + yy * np.cos(ang)
        mask = (u / a) ** 2 + (v / b) ** 2 <= 1.0
        tone = np.array([0.18, 0.11, 0.06]) * rng.uniform(0.7, 1.4) + (0.0, 0.03 * (grade == 0), 0.0)
        patch = img[cy - size:cy + size + 1, cx - size:cx + size + 1]
        patch[mask] = tone
    return img


def augment(rng, img):
    if rng.random() < 0.5:
        img = img[:, ::-1]
    if rng.random() < 0.5:
        img = img[::-1]
    img = img * rng.uniform(0.85, 1.15) + rng.normal(0, 0.02, img.shape)
    return ((img - img.mean()) / (img.std() + 1e-6)).astype(np.float32)


class LeafGradeShelf(keras.utils.PyDataset):
    def __init__(self, seed):
        super().__init__(workers=1, use_multiprocessing=False, max_queue_size=4)
        self.seed = seed

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        labels = rng.integers(0, len(GRADES), BATCH)
        photos = np.stack([augment(rng, paint_leaf_photo(rng, int(g))) for g in labels])
        return photos, labels.astype(np.int32)


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((SIDE, SIDE, 3)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(len(GRADES)),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(data, steps=None):
    model = build_model()
    timer = StepTimer()
    model.fit(data, steps_per_epoch=steps, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


full = train(LeafGradeShelf(11))
emit({"steps_per_second": 1.0 / full})
print("[leafgradephotos] normal run: %.4f s/step, %.2f steps/s, wall %.1f s"
      % (full, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    x, y = LeafGradeShelf(11)[0]
    compute = train(tf.data.Dataset.from_tensors((x, y)).repeat(), steps=STEPS)
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[leafgradephotos] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
