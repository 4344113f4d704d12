"""Lung nodule patch classification from CT volumes.

Random 3D patches are cut from in-memory CT volumes, smoothed, flipped and
normalised on the fly by a Python generator, then a 3D CNN predicts whether a
nodule is present in the patch.
"""

import argparse
import json
import os
import time

import numpy as np
import scipy.ndimage
import tensorflow as tf
import keras

N_VOLUMES = 10
VOLUME_SHAPE = (96, 128, 128)
PATCH = 48
BATCH_SIZE = 4
STEPS = 150
LR = 3e-4

parser = argparse.ArgumentParser()
parser.add_argument("--truth", action="store_true")
args = parser.parse_args()

rng = np.random.default_rng(3)

# ---------------------------------------------------------------- data
print("synthesising CT volumes ...")
volumes = []
nodule_centres = []
for v in range(N_VOLUMES):
    vol = rng.normal(-700.0, 120.0, size=VOLUME_SHAPE).astype(np.float32)
    centres = []
    for _ in range(6):
        c = [rng.integers(PATCH // 2, s - PATCH // 2) for s in VOLUME_SHAPE]
        zz, yy, xx = np.ogrid[c[0] - 6 : c[0] + 6, c[1] - 6 : c[1] + 6, c[2] - 6 : c[2] + 6]
        ball = (zz - c[0]) ** 2 + (yy - c[1]) ** 2 + (xx - c[2]) ** 2 < 30
        vol[c[0] - 6 : c[0] + 6, c[1] - 6 : c[1] + 6, c[2] - 6 : c[2] + 6][ball] = 40.0
        centres.append(c)
    volumes.append(vol)
    nodule_centres.append(np.array(centres))


def sample_patch(gen):
    v = gen.integers(N_VOLUMES)
    vol = volumes[v]
    if gen.random() < 0.5:
        c = nodule_centres[v][gen.integers(len(nodule_centres[v]))]
        c = c + gen.integers(-8, 9, size=3)
        label = 1.0
    else:
        c = [gen.integers(PATCH // 2, s - PATCH // 2) for s in VOLUME_SHAPE]
        label = 0.0
    lo = [int(np.clip(ci - PATCH // 2, 0, s - PATCH)) for ci, s in zip(c, VOLUME_SHAPE)]
    patch = vol[lo[0] : lo[0] + PATCH, lo[1] : lo[1] + PATCH, lo[2] : lo[2] + PATCH]
    patch = np.clip(patch, -1000.0, 400.0)
    axes = ((1, 2), (0, 2), (0, 1))[gen.integers(3)]
    angle = gen.uniform(-15.0, 15.0)
    patch = scipy.ndimage.rotate(patch, angle, axes=axes, reshape=False, order=3, mode="nearest")
    patch = scipy.ndimage.gaussian_filter(patch, sigma=gen.uniform(0.5, 1.5))
    for axis in range(3):
        if gen.random() < 0.5:
            patch = np.flip(patch, axis=axis)
    patch = (patch + 300.0) / 700.0
    return patch[..., None].astype(np.float32), label


def patch_generator(seed=0):
    gen = np.random.default_rng(seed)
    while True:
        xs, ys = [], []
        for _ in range(BATCH_SIZE):
            x, y = sample_patch(gen)
            xs.append(x)
            ys.append(y)
        yield np.stack(xs), np.array(ys, dtype=np.float32)


# ---------------------------------------------------------------- model
def build_model():
    inputs = keras.Input(shape=(PATCH, PATCH, PATCH, 1))
    x = inputs
    for filters in (12, 24, 32):
        x = keras.layers.Conv3D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.MaxPooling3D(2)(x)
    x = keras.layers.GlobalAveragePooling3D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(LR),
        loss="binary_crossentropy",
        metrics=["accuracy"],
    )
    return model


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append([])

    def on_train_batch_end(self, batch, logs=None):
        self.epochs[-1].append(time.perf_counter())

    def seconds_per_step(self, skip=5):
        d = np.concatenate([np.diff(e) for e in self.epochs if len(e) > 1])
        return float(np.mean(d[skip:]))


def write_out(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def train(data):
    model = build_model()
    clock = StepClock()
    model.fit(data, steps_per_epoch=STEPS, epochs=1, callbacks=[clock], verbose=2)
    return clock.seconds_per_step()


full = train(patch_generator(seed=0))
write_out({"steps_per_second": 1.0 / full})
summary = f"ct nodules: {1.0 / full:.2f} steps/s ({full * 1000:.1f} ms/step)"

if args.truth:
    batch = next(patch_generator(seed=1))
    compute = train(tf.data.Dataset.from_tensors(batch).repeat())
    frac = min(max((full - compute) / full, 0.0), 1.0)
    write_out({"truth_input_fraction": frac})
    summary += f", cached {compute * 1000:.1f} ms/step, input fraction {frac:.2f}"

print(summary)
