"""Shape-recognition training on images rendered on the fly with PIL.ImageDraw.

Each example is drawn per step in a Python generator (random ellipse /
rectangle / triangle / text glyph on a noisy canvas), stacked and handed to
model.fit directly.
"""
import argparse
import json
import os
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
import tensorflow as tf
import keras

IMG = 72
BATCH = 48
STEPS = 80
EPOCHS = 3
CLASSES = ["ellipse", "rectangle", "triangle", "glyph"]


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps({key: value}) + "\n")


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.gaps = []

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now

    def seconds_per_step(self):
        return float(np.mean(self.gaps[5:]))


def render(rng):
    label = int(rng.integers(len(CLASSES)))
    img = Image.new("L", (IMG, IMG), color=int(rng.integers(0, 60)))
    draw = ImageDraw.Draw(img)
    for _ in range(8):  # distractor strokes
        pts = [tuple(rng.integers(0, IMG, 2).tolist()) for _ in range(2)]
        draw.line(pts, fill=int(rng.integers(40, 120)), width=1)
    cx, cy = rng.integers(18, IMG - 18, 2)
    r = int(rng.integers(8, 16))
    fill = int(rng.integers(150, 255))
    if label == 0:
        draw.ellipse([cx - r, cy - r // 2, cx + r, cy + r // 2], fill=fill)
    elif label == 1:
        draw.rectangle([cx - r, cy - r, cx + r, cy + r // 2], fill=fill)
    elif label == 2:
        draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=fill)
    else:
        draw.text((cx - r, cy - r), "AKQ"[int(rng.integers(3))] * 2, fill=fill)
    img = img.rotate(float(rng.uniform(-30, 30)), resample=Image.BILINEAR)
    img = img.filter(ImageFilter.MedianFilter(3))
    img = img.filter(ImageFilter.GaussianBlur(radius=float(rng.uniform(0.3, 1.2))))
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = arr + rng.normal(0, 0.05, arr.shape).astype(np.float32)
    return arr[..., None], label


def batches(seed):
    rng = np.random.default_rng(seed)
    while True:
        xs, ys = zip(*(render(rng) for _ in range(BATCH)))
        yield np.stack(xs), np.array(ys, dtype=np.int32)


def build_model():
    model = keras.Sequential([
        keras.Input((IMG, IMG, 1)),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(len(CLASSES)),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(data):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(data, steps_per_epoch=STEPS, epochs=EPOCHS,
                     callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    full, hist = train(batches(seed=1))
    report("steps_per_second", 1.0 / full)
    msg = f"shapes: {full * 1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
    if args.truth:
        fixed = next(batches(seed=2))
        compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
