"""Leaf disease classifier with Pillow augmentation and an XLA-compiled training step."""

import argparse
import json
import os
import time

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter
import tensorflow as tf
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps", type=int, default=55)
parser.add_argument("--image-size", type=int, default=96)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

DISEASES = ["healthy", "rust", "blight", "powdery_mildew", "leaf_spot"]
SRC_SIZE = 256


def report(key, value):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(21)


def make_leaf(label):
    img = Image.new("RGB", (SRC_SIZE, SRC_SIZE), tuple(int(v) for v in rng.integers(60, 120, 3)))
    draw = ImageDraw.Draw(img)
    cx, cy = rng.integers(100, 156, 2)
    draw.ellipse([cx - 80, cy - 105, cx + 80, cy + 105], fill=(40, int(rng.integers(120, 200)), 40))
    for _ in range(label * 12):
        x, y = rng.integers(20, SRC_SIZE - 20, 2)
        r = int(rng.integers(2, 7))
        draw.ellipse([x - r, y - r, x + r, y + r], fill=(150, 90 + 10 * label, 30))
    return img


leaves = [make_leaf(i % len(DISEASES)) for i in range(300)]
leaf_labels = np.array([i % len(DISEASES) for i in range(300)], dtype=np.int32)


def augment(img):
    img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.5))))
    img = img.rotate(float(rng.uniform(-30, 30)), resample=Image.BICUBIC)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    crop = int(rng.integers(180, SRC_SIZE))
    x0, y0 = rng.integers(0, SRC_SIZE - crop + 1, 2)
    img = img.crop((int(x0), int(y0), int(x0) + crop, int(y0) + crop))
    img = img.resize((args.image_size, args.image_size), Image.BICUBIC)
    img = ImageEnhance.Brightness(img).enhance(float(rng.uniform(0.7, 1.3)))
    img = ImageEnhance.Contrast(img).enhance(float(rng.uniform(0.7, 1.3)))
    img = ImageEnhance.Color(img).enhance(float(rng.uniform(0.6, 1.4)))
    return np.asarray(img, dtype=np.float32) / 255.0


def leaf_generator(batch_size):
    while True:
        idx = rng.integers(0, len(leaves), batch_size)
        x = np.stack([augment(leaves[i]) for i in idx])
        y = leaf_labels[idx]
        yield x, y


# ---------------- model ----------------
def build_model():
    inputs = keras.Input(shape=(args.image_size, args.image_size, 3))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(len(DISEASES))(x)
    return keras.Model(inputs, outputs)


def train(batches):
    model = build_model()
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer.build(model.trainable_variables)

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    times = []
    for step, (x, y) in enumerate(batches):
        if step >= args.steps:
            break
        loss = float(train_step(x, y))
        times.append(time.perf_counter())
        if step % 20 == 0:
            print(f"step {step:3d} loss {loss:.4f}")
    return (times[-1] - times[4]) / (len(times) - 5), loss


def same_batch(batch):
    while True:
        yield batch


sec_full, loss = train(leaf_generator(args.batch_size))
report("steps_per_second", 1.0 / sec_full)
print(f"leaf disease: {args.steps} steps, {sec_full * 1000:.1f} ms/step, final loss {loss:.4f}")

if args.truth:
    fixed = next(leaf_generator(args.batch_size))
    sec_cached, _ = train(same_batch(fixed))
    frac = min(1.0, max(0.0, (sec_full - sec_cached) / sec_full))
    report("truth_input_fraction", frac)
    print(
        f"truth: full {sec_full * 1000:.1f} ms, cached {sec_cached * 1000:.1f} ms, input fraction {frac:.3f}"
    )
