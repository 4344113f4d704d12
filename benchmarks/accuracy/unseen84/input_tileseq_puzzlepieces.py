import time; T0 = time.perf_counter()
import os
import sys
import json
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


def mean_after_warmup(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return sum(tail) / max(len(tail), 1)


def input_fraction(full, compute):
    return min(max((full - compute) / full, 0.0), 1.0)


class StepTimer(keras.callbacks.Callback):
    """Stamps perf_counter at every train batch end; gaps only within an epoch."""

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
        return mean_after_warmup(self.gaps)


# Jigsaw puzzle-piece images: each 40x40 RGB tile is cut from a procedurally
# painted puzzle picture, then gets its knob/socket mask drawn pixel by pixel
# and an edge-strength channel computed; the label is the piece type
# (corner / edge / interior).  A keras.utils.PyDataset builds every batch
# on the fly in __getitem__ (workers=1).
TILE = 40
BATCH = 48
STEPS = 300
EPOCHS = 3
N_CLASSES = 3


def knob_mask(rng, kind):
    mask = np.ones((TILE, TILE), dtype=np.float32)
    sides = [0, 1, 2, 3]
    flat = {0: 2, 1: 1, 2: 0}[kind]
    rng.shuffle(sides)
    for s_i, side in enumerate(sides):
        if s_i < flat:
            continue
        cy, cx = [(0, TILE // 2), (TILE // 2, TILE - 1), (TILE - 1, TILE // 2), (TILE // 2, 0)][side]
        r = int(rng.integers(6, 10))
        socket = rng.random() < 0.5
        for y in range(max(0, cy - r), min(TILE, cy + r + 1)):
            for x in range(max(0, cx - r), min(TILE, cx + r + 1)):
                if (y - cy) ** 2 + (x - cx) ** 2 <= r * r:
                    mask[y, x] = 0.0 if socket else 1.0
    return mask


class PuzzlePieces(keras.utils.PyDataset):
    def __init__(self, seed, steps, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.steps = steps
        yy, xx = np.mgrid[0:TILE, 0:TILE].astype(np.float32) / TILE
        self.yy, self.xx = yy, xx

    def __len__(self):
        return self.steps

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        images = np.empty((BATCH, TILE, TILE, 4), dtype=np.float32)
        labels = np.empty((BATCH,), dtype=np.int32)
        for i in range(BATCH):
            kind = int(rng.integers(0, N_CLASSES))
            f1, f2, ph = rng.uniform(2, 9), rng.uniform(2, 9), rng.uniform(0, 6.28)
            rgb = np.stack([
                np.sin(f1 * self.xx + ph),
                np.cos(f2 * self.yy - ph),
                np.sin(f1 * self.yy + f2 * self.xx),
            ], axis=-1) * 0.5 + 0.5
            mask = knob_mask(rng, kind)
            rgb = rgb * mask[..., None]
            gy, gx = np.gradient(mask)
            images[i, ..., :3] = rgb
            images[i, ..., 3] = np.hypot(gx, gy)
            labels[i] = kind
        return images, labels


def make_model():
    inp = keras.Input((TILE, TILE, 4))
    x = keras.layers.Conv2D(16, 3, strides=2, activation="relu", padding="same")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, activation="relu", padding="same")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def run(data):
    keras.utils.set_random_seed(5)
    model = make_model()
    timer = StepTimer()
    if isinstance(data, tf.data.Dataset):
        model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


def main():
    pieces = PuzzlePieces(seed=3, steps=STEPS, workers=1, use_multiprocessing=False)
    full = run(pieces)
    emit({"steps_per_second": 1.0 / full})
    print(f"puzzlepieces: {full * 1000:.1f} ms/step, wall {time.perf_counter() - T0:.1f} s")
    if TRUTH:
        one = pieces[0]
        compute = run(tf.data.Dataset.from_tensors(one).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"puzzlepieces truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
