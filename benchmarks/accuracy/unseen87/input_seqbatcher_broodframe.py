import time; T0 = time.perf_counter()
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


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / len(tail)


def truth_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every batch end; gaps never cross epochs."""

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

# Brood-frame photos: 64x64 RGB comb patches labelled by cell content
# (capped brood, open larvae, pollen, capped honey, empty comb).  A
# keras.utils.PyDataset (workers=1) renders each hexagonal comb patch and
# augments it (flip/rotate, lighting, 5-tap blur, sensor noise) in NumPy,
# one image at a time, inside __getitem__; model.fit consumes it.

BATCH = 32
STEPS = 60
EPOCHS = 2
SIZE = 64
CLASSES = 5
CELL = 9.0

_yy, _xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
_CENTERS = [(x + (CELL / 2 if int(r) % 2 else 0.0), r * CELL * 0.866)
            for r in range(int(SIZE / (CELL * 0.866)) + 2)
            for x in np.arange(0.0, SIZE + CELL, CELL)]
_PALETTE = {0: (0.78, 0.60, 0.35), 1: (0.95, 0.93, 0.85), 2: (0.95, 0.70, 0.10),
            3: (0.85, 0.75, 0.40), 4: (0.25, 0.18, 0.10)}
_BLUR = np.array([1, 4, 6, 4, 1], np.float32) / 16.0


def render_patch(rng, label):
    img = np.empty((SIZE, SIZE, 3), np.float32)
    img[:] = (0.55, 0.42, 0.20)  # wax walls
    for cx, cy in _CENTERS:
        content = label if rng.random() < 0.8 else int(rng.integers(CLASSES))
        mask = (_xx - cx) ** 2 + (_yy - cy) ** 2 < (CELL * 0.42) ** 2
        colour = np.asarray(_PALETTE[content]) * rng.uniform(0.85, 1.1)
        img[mask] = colour
    return img


def augment(img, rng):
    img = np.rot90(img, int(rng.integers(4)))
    if rng.random() < 0.5:
        img = img[:, ::-1]
    img = img * rng.uniform(0.7, 1.3) + rng.uniform(-0.1, 0.1)
    out = np.empty_like(img)
    for c in range(3):
        ch = img[:, :, c]
        ch = np.apply_along_axis(np.convolve, 0, ch, _BLUR, mode="same")
        out[:, :, c] = np.apply_along_axis(np.convolve, 1, ch, _BLUR, mode="same")
    out += rng.normal(0.0, 0.03, out.shape).astype(np.float32)
    return np.clip(out, 0.0, 1.0)


class BroodFrameBatches(keras.utils.PyDataset):
    def __init__(self, n_batches, seed, **kwargs):
        super().__init__(**kwargs)
        self.n_batches = n_batches
        self.seed = seed

    def __len__(self):
        return self.n_batches

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        x = np.empty((BATCH, SIZE, SIZE, 3), np.float32)
        y = rng.integers(0, CLASSES, BATCH).astype(np.int32)
        for i in range(BATCH):
            x[i] = augment(render_patch(rng, int(y[i])), rng)
        return x, y


def build_model():
    model = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(24, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(CLASSES),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


keras.utils.set_random_seed(87)
timer = StepTimer()
model = build_model()
frames = BroodFrameBatches(STEPS, seed=87, workers=1, use_multiprocessing=False)
model.fit(frames, epochs=EPOCHS, callbacks=[timer], verbose=0)
full = seconds_per_step(timer.gaps)
emit({"steps_per_second": 1.0 / full})
print(f"[broodframe] normal: {full * 1000:.1f} ms/step, {1.0 / full:.2f} steps/s, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    xb, yb = BroodFrameBatches(1, seed=88)[0]
    one = tf.data.Dataset.from_tensors((xb, yb)).repeat()
    keras.utils.set_random_seed(87)
    timer2 = StepTimer()
    model2 = build_model()
    model2.fit(one, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer2], verbose=0)
    compute = seconds_per_step(timer2.gaps)
    frac = truth_fraction(full, compute)
    emit({"truth_input_fraction": frac})
    print(f"[broodframe] truth: compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}")
