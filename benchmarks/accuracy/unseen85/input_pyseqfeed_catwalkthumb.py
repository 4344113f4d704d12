"""Catwalk photo-thumbnail garment tagger.

A keras.utils.PyDataset (workers=1) serves batches of runway thumbnails:
each look is decoded from a packed uint8 archive, randomly cropped, flipped,
colour-jittered for stage lighting, and sharpened row by row and column by column in NumPy before
model.fit sees it.
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


SEED = 8504
BATCH = 32
STEPS_PER_EPOCH = 140
EPOCHS = 3
SRC_H, SRC_W = 72, 56
OUT_H, OUT_W = 64, 48
N_LOOKS = 1200
GARMENTS = ["gown", "trench", "blazer", "mini_skirt", "jumpsuit", "knit", "cape", "suit"]

rng = np.random.default_rng(SEED)
keras.utils.set_random_seed(SEED)


def make_archive():
    yy, xx = np.mgrid[0:SRC_H, 0:SRC_W].astype(np.float32)
    labels = rng.integers(0, len(GARMENTS), size=N_LOOKS)
    imgs = np.empty((N_LOOKS, SRC_H, SRC_W, 3), dtype=np.uint8)
    for i in range(N_LOOKS):
        g = labels[i]
        bg = rng.uniform(20, 60)
        img = np.full((SRC_H, SRC_W, 3), bg, dtype=np.float32)
        cx = SRC_W / 2 + rng.normal(0, 3)
        width = 8 + 2.5 * g + (yy / SRC_H) * (4 * (g % 3))
        length = 0.35 + 0.08 * g
        mask = (np.abs(xx - cx) < width) & (yy > 10) & (yy < 10 + length * SRC_H)
        colour = rng.uniform(40, 255, size=3)
        stripes = 1.0 + 0.15 * np.sin(xx * (0.3 + 0.1 * g))
        img[mask] = (colour[None, :] * stripes[mask][:, None])
        img += rng.normal(0, 6, size=img.shape)
        imgs[i] = np.clip(img, 0, 255).astype(np.uint8)
    return imgs, labels.astype(np.int32)


ARCHIVE, LABELS = make_archive()
SHARPEN = np.array([-0.25, 1.5, -0.25], dtype=np.float32)


def prepare_look(raw, aug):
    img = raw.astype(np.float32) / 255.0
    oy = int(aug.integers(0, SRC_H - OUT_H + 1))
    ox = int(aug.integers(0, SRC_W - OUT_W + 1))
    img = img[oy:oy + OUT_H, ox:ox + OUT_W]
    if aug.random() < 0.5:
        img = img[:, ::-1]
    gain = aug.uniform(0.8, 1.2, size=3).astype(np.float32)  # stage-light colour cast
    img = np.clip(img * gain + aug.normal(0, 0.02), 0.0, 1.0)
    out = img.copy()
    for _ in range(2):  # two-pass unsharp mask for soft runway lighting
        for r in range(OUT_H):  # horizontal pass, row by row
            for c in range(3):
                out[r, :, c] = np.convolve(out[r, :, c], SHARPEN, mode="same")
        for k in range(OUT_W):  # vertical pass, column by column
            for c in range(3):
                out[:, k, c] = np.convolve(out[:, k, c], SHARPEN, mode="same")
    return (out - 0.5) / 0.25


class RunwayThumbs(keras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.aug = np.random.default_rng(SEED + 1)

    def __len__(self):
        return STEPS_PER_EPOCH

    def __getitem__(self, idx):
        pick = self.aug.integers(0, N_LOOKS, size=BATCH)
        xb = np.stack([prepare_look(ARCHIVE[i], self.aug) for i in pick]).astype(np.float32)
        return xb, LABELS[pick]


def build_model():
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([
        keras.Input((OUT_H, OUT_W, 3)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(len(GARMENTS)),
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


def train(data):
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history["loss"][-1]


def main():
    spf, loss = train(RunwayThumbs(workers=1, use_multiprocessing=False))
    emit({"steps_per_second": 1.0 / spf})
    line = f"catwalkthumb: {EPOCHS}x{STEPS_PER_EPOCH} steps, {spf*1000:.1f} ms/step, loss {loss:.3f}"
    if TRUTH:
        xb, yb = RunwayThumbs(workers=1)[0]
        batch = (tf.constant(xb), tf.constant(yb))
        spc, _ = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((spf - spc) / spf, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f", compute-only {spc*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", total {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
