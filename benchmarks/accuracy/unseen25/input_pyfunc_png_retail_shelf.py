"""Classify retail shelf crops (product facing category) from PNG bytes kept in memory."""

import argparse
import io
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras
from PIL import Image, ImageDraw, ImageFilter

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--images", type=int, default=2000)
parser.add_argument("--size", type=int, default=64)
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

N_CLASSES = 10
IMG = args.size

# ---------------------------------------------------------------- data
rng = np.random.default_rng(3)
png_bytes, labels = [], []
for i in range(args.images):
    label = int(rng.integers(N_CLASSES))
    arr = rng.integers(0, 255, size=(160, 160, 3), dtype=np.uint8)
    img = Image.fromarray(arr)
    draw = ImageDraw.Draw(img)
    color = tuple(int(c) for c in rng.integers(0, 255, 3))
    x0, y0 = rng.integers(10, 60, 2)
    draw.rectangle([x0, y0, x0 + 40 + 8 * label, y0 + 80], fill=color)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    png_bytes.append(buf.getvalue())
    labels.append(label)
print(f"encoded {len(png_bytes)} shelf crops, {sum(map(len, png_bytes)) / 1e6:.1f} MB")


def decode_and_augment(data, label):
    img = Image.open(io.BytesIO(data.numpy())).convert("RGB")
    img = img.resize((IMG + 8, IMG + 8), Image.BILINEAR)
    img = img.filter(ImageFilter.GaussianBlur(radius=0.8))
    ox, oy = np.random.randint(0, 9, 2)
    img = img.crop((ox, oy, ox + IMG, oy + IMG))
    if np.random.rand() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    arr = np.asarray(img, dtype=np.float32) / 127.5 - 1.0
    return arr, label


def tf_decode(data, label):
    image, label = tf.py_function(decode_and_augment, [data, label], [tf.float32, tf.int32])
    image.set_shape((IMG, IMG, 3))
    label.set_shape(())
    return image, label


dataset = tf.data.Dataset.from_tensor_slices((png_bytes, np.array(labels, np.int32)))
dataset = dataset.shuffle(len(png_bytes)).map(tf_decode, num_parallel_calls=2)
dataset = dataset.batch(args.batch_size, drop_remainder=True).prefetch(2)
steps_per_epoch = args.images // args.batch_size


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input((IMG, IMG, 3))
    x = inputs
    for filters in (16, 32, 48, 64):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    outputs = keras.layers.Dense(N_CLASSES)(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.stamps = []

    def on_epoch_begin(self, epoch, logs=None):
        self.stamps.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.stamps[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        durations, seen = [], 0
        for epoch_stamps in self.stamps:
            for i in range(len(epoch_stamps)):
                if seen >= skip and i > 0:
                    durations.append(epoch_stamps[i] - epoch_stamps[i - 1])
                seen += 1
        return float(np.mean(durations))


def report(key, value):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: value}) + "\n")


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=args.epochs, steps_per_epoch=steps_per_epoch, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


full = train(dataset)
report("steps_per_second", 1.0 / full)
summary = f"shelf: {steps_per_epoch} steps/epoch, {full * 1000:.1f} ms/step"

if args.truth:
    batch = next(iter(dataset))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    fraction = min(max((full - compute) / full, 0.0), 1.0)
    report("truth_input_fraction", fraction)
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {fraction:.2f}"
print(summary)
