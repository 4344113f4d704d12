"""Semiconductor wafer-map defect classifier with per-batch NumPy preprocessing."""

import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf
import keras

N_WAFERS = 4096
MAP_SIZE = 64
N_CLASSES = 8
BATCH_SIZE = 64
STEPS_PER_EPOCH = 35
EPOCHS = 2

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


# ---------------- data ----------------
rng = np.random.default_rng(5)
yy, xx = np.mgrid[:MAP_SIZE, :MAP_SIZE]
radius = np.hypot(yy - MAP_SIZE / 2, xx - MAP_SIZE / 2)
wafer_mask = (radius < MAP_SIZE / 2 - 1).astype(np.float32)
labels = rng.integers(0, N_CLASSES, size=N_WAFERS).astype(np.int32)
maps = rng.random((N_WAFERS, MAP_SIZE, MAP_SIZE)).astype(np.float32) < 0.05
for k in range(N_CLASSES):
    idx = labels == k
    ring = np.abs(radius - 4 * (k + 1)) < 1.5
    maps[idx] |= ring[None]
maps = maps.astype(np.uint8) * wafer_mask.astype(np.uint8)


def preprocess_batch(batch_maps, batch_labels):
    m = batch_maps.numpy().astype(np.float32)
    out = np.empty((m.shape[0], MAP_SIZE, MAP_SIZE, 3), np.float32)
    local = np.random.default_rng()
    for i in range(m.shape[0]):
        w = m[i]
        w = np.rot90(w, k=int(local.integers(4)))
        if local.random() < 0.5:
            w = np.fliplr(w)
        # 7x7 median denoise
        padded = np.pad(w, 3)
        windows = np.stack(
            [padded[dy : dy + MAP_SIZE, dx : dx + MAP_SIZE] for dy in range(7) for dx in range(7)]
        )
        den = np.median(windows, axis=0)
        # local defect density (5x5 box filter)
        cs = np.cumsum(np.cumsum(np.pad(den, ((3, 2), (3, 2))), 0), 1)
        density = (cs[5:, 5:] - cs[:-5, 5:] - cs[5:, :-5] + cs[:-5, :-5]) / 25.0
        out[i, ..., 0] = den * wafer_mask
        out[i, ..., 1] = density * wafer_mask
        out[i, ..., 2] = radius / (MAP_SIZE / 2)
    return out, batch_labels.numpy()


def tf_preprocess(batch_maps, batch_labels):
    x, y = tf.py_function(preprocess_batch, [batch_maps, batch_labels], [tf.float32, tf.int32])
    x.set_shape([None, MAP_SIZE, MAP_SIZE, 3])
    y.set_shape([None])
    return x, y


dataset = (
    tf.data.Dataset.from_tensor_slices((maps, labels))
    .shuffle(N_WAFERS)
    .repeat()
    .batch(BATCH_SIZE)
    .map(tf_preprocess)
)


# ---------------- model ----------------
def build_model():
    inp = keras.Input((MAP_SIZE, MAP_SIZE, 3))
    x = inp
    for f in (16, 32, 64):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
        x = keras.layers.BatchNormalization()(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["acc"])
    return model


class StepTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter())

    def seconds_per_step(self):
        return (self.times[-1] - self.times[5]) / (len(self.times) - 6)


def train(ds, tag):
    model = build_model()
    timer = StepTimer()
    print(f"[{tag}] training")
    model.fit(ds, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS, callbacks=[timer], verbose=2)
    return timer.seconds_per_step()


full = train(dataset, "wafers")
write_out({"steps_per_second": 1.0 / full})

if args.truth:
    batch = next(iter(dataset))
    cached = tf.data.Dataset.from_tensors(batch).repeat()
    compute = train(cached, "cached")
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    print(f"full={full:.4f}s/step compute={compute:.4f}s/step input_fraction={frac:.3f}")
else:
    print(f"done: {1.0 / full:.2f} steps/s ({full:.4f} s/step)")
