"""Camera-trap species classifier (u77).

Domain: motion-triggered camera traps in a wildlife reserve; each frame is a
binary PPM (P6) with a text comment header carrying camera id, temperature and
IR flag. Ten species classes.
Data path: PPM byte blobs -> keras.utils.PyDataset.__getitem__ (header parse,
np.frombuffer decode, gray-world white balance, IR de-noise box blur, random
crop/flip, gamma LUT, per-image standardisation) -> model.fit.
Deliberate bottleneck: per-image numpy/Python decode and augmentation in the
PyDataset (workers=1, no multiprocessing).
"""
import time

_WALL0 = time.perf_counter()

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


def _emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def _sec_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self._last = None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


_NORMAL_WALL = [None]


def _mark():
    """Record the process wall time at the end of the normal (non-truth) run."""
    _NORMAL_WALL[0] = time.perf_counter() - _WALL0


def _finish(script, full, compute=None, extra=""):
    _emit({"steps_per_second": 1.0 / full})
    line = "%s: %.4f s/step (%.2f steps/s)" % (script, full, 1.0 / full)
    if compute is not None:
        frac = min(max((full - compute) / full, 0.0), 1.0)
        _emit({"truth_input_fraction": frac})
        line += " | one-batch %.4f s/step | truth_input_fraction %.3f" % (compute, frac)
    if _NORMAL_WALL[0] is not None:
        line += " | wall at end of normal run %.1f s" % _NORMAL_WALL[0]
    line += " | wall %.1f s" % (time.perf_counter() - _WALL0)
    if extra:
        line += " | " + extra
    print(line, flush=True)


def _args():
    p = argparse.ArgumentParser()
    p.add_argument("--truth", action="store_true")
    return p.parse_args()
SCRIPT = "input_pydatasetppm_cameratraps"
BATCH = 32
STEPS = 16
EPOCHS = 2
SIDE = 112
CROP = 80
N_IMAGES = 400
BLUR_PASSES = 3


def make_frames(rng):
    blobs, labels = [], []
    yy, xx = np.mgrid[0:SIDE, 0:SIDE]
    for i in range(N_IMAGES):
        sp = int(rng.integers(0, 10))
        cy, cx = rng.integers(30, SIDE - 30, 2)
        r = 10 + 2 * sp
        body = ((yy - cy) ** 2 + (xx - cx) ** 2 < r * r)
        img = rng.integers(40, 120, (SIDE, SIDE, 3)).astype(np.uint8)
        img[body] = np.array([20 * sp % 255, 90, 255 - 20 * sp], np.uint8)
        header = "P6\n# cam=CT%03d temp=%.1f ir=%d moon=%.2f\n%d %d\n255\n" % (
            i % 37, rng.uniform(5, 35), int(rng.integers(0, 2)), rng.uniform(0, 1), SIDE, SIDE)
        blobs.append(header.encode("ascii") + img.tobytes())
        labels.append(sp)
    return blobs, np.array(labels, np.int32)


def decode_ppm(blob):
    parts = blob.split(b"\n", 4)
    meta = {}
    for tok in parts[1].decode("ascii")[1:].split():
        k, v = tok.split("=")
        meta[k] = v
    w, h = (int(t) for t in parts[2].split())
    img = np.frombuffer(parts[4], np.uint8).reshape(h, w, 3)
    return img, meta


_GAMMA = {g: (255.0 * (np.arange(256) / 255.0) ** g).astype(np.uint8) for g in (0.8, 0.9, 1.0, 1.1, 1.25)}


def augment(img, meta, rng):
    f = img.astype(np.float32)
    means = f.reshape(-1, 3).mean(0)
    f = f * (means.mean() / np.maximum(means, 1.0))
    if meta.get("ir") == "1":
        f = f.mean(2, keepdims=True).repeat(3, 2)
    for _ in range(BLUR_PASSES):
        p = np.pad(f, ((1, 1), (1, 1), (0, 0)), mode="edge")
        f = sum(p[dy:dy + SIDE, dx:dx + SIDE] for dy in range(3) for dx in range(3)) / 9.0
    y0, x0 = rng.integers(0, SIDE - CROP + 1, 2)
    f = f[y0:y0 + CROP, x0:x0 + CROP]
    if rng.random() < 0.5:
        f = f[:, ::-1]
    lut = _GAMMA[float(rng.choice(list(_GAMMA)))]
    f = lut[np.clip(f, 0, 255).astype(np.uint8)].astype(np.float32)
    f = (f - f.mean()) / (f.std() + 1e-6)
    return f


class CameraTrapFrames(keras.utils.PyDataset):
    def __init__(self, blobs, labels, seed, **kw):
        super().__init__(**kw)
        self.blobs, self.labels, self.seed = blobs, labels, seed

    def __len__(self):
        return STEPS

    def __getitem__(self, idx):
        rng = np.random.default_rng(self.seed * 100003 + idx)
        picks = rng.integers(0, len(self.blobs), BATCH)
        xs = []
        for i in picks:
            img, meta = decode_ppm(self.blobs[i])
            xs.append(augment(img, meta, rng))
        return np.stack(xs).astype(np.float32), self.labels[picks]


def build_model():
    m = keras.Sequential([
        keras.Input((CROP, CROP, 3)),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10),
    ])
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def train(data):
    keras.utils.set_random_seed(77)
    model = build_model()
    timer = StepTimer()
    if isinstance(data, keras.utils.PyDataset):
        model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0)
    else:
        model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return _sec_per_step(timer.gaps)


def main():
    args = _args()
    blobs, labels = make_frames(np.random.default_rng(7702))
    full = train(CameraTrapFrames(blobs, labels, 1))
    _mark()
    compute = None
    if args.truth:
        batch = CameraTrapFrames(blobs, labels, 2)[0]
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    _finish(SCRIPT, full, compute)


if __name__ == "__main__":
    main()
