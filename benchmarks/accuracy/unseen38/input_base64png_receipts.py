"""Receipt-type classifier fed from base64-encoded PNG scans held in Python dicts.

A document store hands back records like {"doc_id", "image_b64", "label"};
the PNG bytes are web-safe base64 strings.  The tf.data pipeline decodes them
with tf.io.decode_base64 + tf.io.decode_png in a plain (serial) map.
"""
import argparse
import base64
import io
import json
import os
import time

import numpy as np
from PIL import Image
import tensorflow as tf
import keras

SIDE = 224
N_DOCS = 400
BATCH = 32
STEPS = 50
EPOCHS = 3
N_CLASSES = 5


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


def make_records(rng):
    records = []
    for i in range(N_DOCS):
        label = int(rng.integers(N_CLASSES))
        page = rng.normal(235, 12, (SIDE, SIDE, 3))
        rows = rng.integers(4, 14)
        for r in range(rows):  # text lines, denser for some receipt types
            y = 8 + r * 8
            if y >= SIDE - 4:
                break
            length = int(rng.integers(30, SIDE - 10)) // (1 + label % 2)
            page[y:y + 3, 6:6 + length] = rng.normal(40, 20, (3, length, 3))
        page[:, :, label % 3] -= 10 * label
        png = io.BytesIO()
        Image.fromarray(np.clip(page, 0, 255).astype(np.uint8)).save(png, format="PNG")
        records.append({
            "doc_id": f"rcpt-{i:05d}",
            "image_b64": base64.urlsafe_b64encode(png.getvalue()).decode("ascii"),
            "label": label,
        })
    return records


def decode(b64, label):
    raw = tf.io.decode_base64(b64)
    img = tf.io.decode_png(raw, channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.random_flip_left_right(img)
    return img, label


def pipeline(records):
    ds = tf.data.Dataset.from_tensor_slices((
        [r["image_b64"] for r in records],
        np.array([r["label"] for r in records], dtype=np.int32),
    ))
    return ds.shuffle(len(records)).repeat().map(decode).batch(BATCH)


def build_model():
    model = keras.Sequential([
        keras.Input((SIDE, SIDE, 3)),
        keras.layers.AveragePooling2D(4),
        keras.layers.Conv2D(16, 3, strides=2, activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Conv2D(48, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(N_CLASSES),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step(), hist.history


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    records = make_records(np.random.default_rng(3))
    full, hist = train(pipeline(records))
    report("steps_per_second", 1.0 / full)
    msg = f"receipts: {full * 1000:.1f} ms/step, acc {hist['accuracy'][-1]:.3f}"
    if args.truth:
        fixed = next(iter(pipeline(records)))
        compute, _ = train(tf.data.Dataset.from_tensors(fixed).repeat())
        frac = min(max((full - compute) / full, 0.0), 1.0)
        report("truth_input_fraction", frac)
        msg += f", compute-only {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"
    print(msg + f", wall {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
