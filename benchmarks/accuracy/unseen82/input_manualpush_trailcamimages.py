import time; T0 = time.perf_counter()
"""Trail-camera frames -> species (deer, black bear, coyote, hiker, empty).

Each frame is synthesised and pre-processed per image in NumPy inside a
Python loop: sensor noise, a moving animal blob, infrared night-mode
conversion, a separable 5x5 Gaussian denoise done tap by tap, contrast
stretch from percentiles, random crop and flip. The loop then pushes the
batch into model.train_on_batch.
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

BATCH = 32
STEPS = 110
EPOCHS = 3
RAW = 88      # raw frame side
SIDE = 64     # crop fed to the CNN
CLASSES = 5
KERNEL = np.array([1, 4, 6, 4, 1], np.float32) / 16.0


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


def synth_frame(rng):
    label = int(rng.integers(CLASSES))
    night = rng.random() < 0.4
    img = rng.normal(0.35, 0.08, (RAW, RAW, 3)).astype(np.float32)
    img[: RAW // 3] += 0.2  # sky band
    if label != 4:
        cy, cx = rng.integers(20, RAW - 20, size=2)
        ry, rx = (10 + 3 * label, 14 + 2 * label)
        yy, xx = np.ogrid[:RAW, :RAW]
        mask = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1.0
        img[mask] = np.array([0.45 - 0.08 * label, 0.3, 0.2 + 0.05 * label], np.float32)
    if night:
        gray = img @ np.array([0.299, 0.587, 0.114], np.float32)
        img = np.repeat(gray[..., None], 3, axis=2) * 1.6
    return img, label


def preprocess(img, rng):
    # separable 5x5 Gaussian denoise, one tap at a time
    pad = np.pad(img, ((2, 2), (2, 2), (0, 0)), mode="reflect")
    tmp = np.zeros((RAW + 4, RAW, 3), np.float32)
    for k in range(5):
        tmp += KERNEL[k] * pad[:, k:k + RAW]
    out = np.zeros((RAW, RAW, 3), np.float32)
    for k in range(5):
        out += KERNEL[k] * tmp[k:k + RAW]
    # second pass for heavy IR noise
    pad = np.pad(out, ((2, 2), (2, 2), (0, 0)), mode="reflect")
    tmp[:] = 0
    for k in range(5):
        tmp += KERNEL[k] * pad[:, k:k + RAW]
    out[:] = 0
    for k in range(5):
        out += KERNEL[k] * tmp[k:k + RAW]
    lo, hi = np.percentile(out, [2, 98], axis=(0, 1))
    out = np.clip((out - lo) / (hi - lo + 1e-6), 0.0, 1.0)
    oy, ox = rng.integers(0, RAW - SIDE, size=2)
    out = out[oy:oy + SIDE, ox:ox + SIDE]
    if rng.random() < 0.5:
        out = out[:, ::-1]
    return np.ascontiguousarray(out)


def make_batch(rng):
    xs = np.empty((BATCH, SIDE, SIDE, 3), np.float32)
    ys = np.empty((BATCH,), np.int32)
    for i in range(BATCH):
        img, label = synth_frame(rng)
        xs[i] = preprocess(img, rng)
        ys[i] = label
    return xs, ys


def build_model():
    keras.utils.set_random_seed(82)
    model = keras.Sequential([
        keras.Input((SIDE, SIDE, 3)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(48, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(CLASSES),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def train(next_batch):
    model = build_model()
    gaps = []
    for epoch in range(EPOCHS):
        last = None
        for step in range(STEPS):
            xs, ys = next_batch()
            loss = float(model.train_on_batch(xs, ys))
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    g = gaps[5:]
    return sum(g) / len(g), len(gaps), loss


def main():
    rng = np.random.default_rng(82)
    full, n, loss = train(lambda: make_batch(rng))
    emit({"steps_per_second": 1.0 / full})
    msg = f"trailcamimages: {full * 1000:.1f} ms/step over {n} gaps, loss {loss:.3f}"
    if TRUTH:
        fixed = make_batch(np.random.default_rng(7))
        compute, _, _ = train(lambda: fixed)
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
