# Leaf photos stored as JPEG files; a plain Python generator opens each file with Pillow,
# resizes and normalises it, and yields batches straight to model.fit.
import atexit
import os
import shutil
import tempfile

import keras
import numpy as np
from PIL import Image
from truth import measure, timed_fit

folder = tempfile.mkdtemp(prefix="leaves-")
atexit.register(shutil.rmtree, folder, ignore_errors=True)
rng = np.random.default_rng(0)
records = []
for i in range(400):
    label = i % 6
    yy, xx = np.mgrid[0:160, 0:160]
    blob = np.exp(-((yy - 80) ** 2 + (xx - 80) ** 2) / (400.0 + 150 * label))
    pixels = np.stack([blob * 90, blob * (120 + 20 * label), blob * 60], axis=-1)
    pixels = np.clip(pixels + rng.normal(0, 25, pixels.shape) + 60, 0, 255).astype(np.uint8)
    path = os.path.join(folder, f"leaf_{i:04d}.jpg")
    Image.fromarray(pixels).save(path, quality=90)
    records.append((path, label))


def load_batches(batch_size=32, size=112):
    order = np.random.default_rng(1)
    while True:
        chosen = order.choice(len(records), size=batch_size, replace=False)
        images, targets = [], []
        for i in chosen:
            path, label = records[i]
            with Image.open(path) as image:
                image = image.convert("RGB").resize((size, size), Image.BILINEAR)
                if order.random() < 0.5:
                    image = image.transpose(Image.FLIP_LEFT_RIGHT)
                images.append(np.asarray(image, np.float32) / 127.5 - 1.0)
            targets.append(label)
        yield np.stack(images), np.asarray(targets)


model = keras.Sequential(
    [
        keras.Input((112, 112, 3)),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(24, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(40, 3, padding="same", activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(6),
    ]
)
model.compile(
    "adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
)
model.fit(load_batches(), steps_per_epoch=3, verbose=0)
timed_fit(model, load_batches(), 350)
measure(model, load_batches, 25)
