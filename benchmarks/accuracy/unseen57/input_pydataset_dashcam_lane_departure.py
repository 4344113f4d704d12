"""Automotive: lane-departure warning from dash-camera frames.

Frames are stored as zlib-compressed raw RGB buffers (a stand-in for a frame dump from an
in-vehicle recorder). A keras.utils.PyDataset decodes each frame in __getitem__
(zlib.decompress + np.frombuffer), then applies Python-side augmentation: random crop,
brightness/contrast jitter, horizontal flip with label mirroring, and a nearest-neighbour
resize by index arrays. Runs single-worker, so decoding stalls every step. model.fit.
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

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


def finish_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full {full*1000:.1f} ms/step, one-batch {compute*1000:.1f} ms/step, input fraction {frac:.3f}")
    return frac


parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
ARGS = parser.parse_args()
keras.utils.set_random_seed(57)
import zlib

N_FRAMES = 256
H, W = 120, 160
OUT = 48
BATCH = 32
STEPS = 25
EPOCHS = 3
N_CLASSES = 3  # drifting left, centred, drifting right


def make_frames():
    rng = np.random.default_rng(57)
    frames, labels = [], []
    yy, xx = np.mgrid[0:H, 0:W]
    for i in range(N_FRAMES):
        cls = int(rng.integers(N_CLASSES))
        img = np.zeros((H, W, 3), np.uint8)
        img[:] = (70, 70, 75)
        img[: H // 3] = (150, 180, 220)
        shift = (cls - 1) * 25 + rng.normal(0, 5)
        for lane_x0, slope in ((40, -0.9), (120, 0.9)):
            xline = lane_x0 + shift + slope * (yy - H // 3)
            mask = (np.abs(xx - xline) < 2.5) & (yy > H // 3)
            img[mask] = (230, 230, 230)
        img = np.clip(img + rng.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
        frames.append(zlib.compress(img.tobytes(), 6))
        labels.append(cls)
    return frames, np.array(labels, np.int32)


FRAMES, LABELS = make_frames()


class DashcamFrames(keras.utils.PyDataset):
    def __init__(self, seed):
        super().__init__(workers=1, use_multiprocessing=False)
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return STEPS

    def _augment(self, idx):
        img = np.frombuffer(zlib.decompress(FRAMES[idx]), np.uint8).reshape(H, W, 3)
        label = int(LABELS[idx])
        ch, cw = int(self.rng.integers(96, H + 1)), int(self.rng.integers(128, W + 1))
        y0, x0 = int(self.rng.integers(0, H - ch + 1)), int(self.rng.integers(0, W - cw + 1))
        crop = img[y0:y0 + ch, x0:x0 + cw].astype(np.float32) / 255.0
        crop = (crop - crop.mean()) * self.rng.uniform(0.7, 1.3) + crop.mean() + self.rng.uniform(-0.15, 0.15)
        if self.rng.random() < 0.5:
            crop = crop[:, ::-1]
            label = N_CLASSES - 1 - label
        ys = (np.arange(OUT) * ch / OUT).astype(int)
        xs = (np.arange(OUT) * cw / OUT).astype(int)
        out = crop[ys][:, xs]
        return np.clip(out, 0.0, 1.0), label

    def __getitem__(self, i):
        xb = np.empty((BATCH, OUT, OUT, 3), np.float32)
        yb = np.empty((BATCH,), np.int32)
        for j in range(BATCH):
            xb[j], yb[j] = self._augment((i * BATCH + j) % N_FRAMES)
        return xb, yb


def build_model():
    m = keras.Sequential([
        keras.Input((OUT, OUT, 3)),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_CLASSES),
    ])
    m.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(data):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


full = train(DashcamFrames(seed=1))
emit({"steps_per_second": 1.0 / full})
print(f"input_pydataset_dashcam_lane_departure: {EPOCHS}x{STEPS} steps, {full*1000:.1f} ms/step, wall {time.perf_counter()-_T0:.1f} s")
if ARGS.truth:
    xb, yb = DashcamFrames(seed=2)[0]
    compute = train(tf.data.Dataset.from_tensors((xb, yb)).repeat())
    finish_truth(full, compute)
