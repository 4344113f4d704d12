"""Crop-disease classifier on hyperspectral field patches.

The camera exports each patch as a headerless little-endian uint16 cube
(rows x cols x bands).  The tf.data pipeline reads each file with
tf.io.read_file, decodes it with tf.io.decode_raw, reshapes it, converts
digital numbers to reflectance, standardises every band and appends a
spectral first derivative, all in one serial map.
"""
import argparse
import json
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf
import keras

ROWS = COLS = 64
BANDS = 128
N_PATCHES = 400
BATCH = 32
STEPS = 25
EPOCHS = 2
CLASSES = 4


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self._last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self._last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self._last is not None:
            self.gaps.append(now - self._last)
        self._last = now


def seconds_per_step(gaps):
    tail = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(tail))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def write_cubes(root, rng):
    paths, labels = [], []
    wl = np.linspace(0, 1, BANDS)
    for i in range(N_PATCHES):
        label = int(rng.integers(0, CLASSES))
        spectrum = 1500 + 900 * np.sin(3 * wl + label) + 400 * wl * label
        cube = spectrum[None, None, :] + rng.normal(0, 120, size=(ROWS, COLS, BANDS))
        p = os.path.join(root, f"patch_{i:05d}_c{label}.raw")
        np.clip(cube, 0, 65535).astype("<u2").tofile(p)
        paths.append(p)
        labels.append(label)
    return paths, np.array(labels, dtype=np.int32)


DARK = tf.constant(np.full(BANDS, 90.0, np.float32))
WHITE = tf.constant(np.full(BANDS, 4000.0, np.float32))


def decode_patch(path, label):
    raw = tf.io.decode_raw(tf.io.read_file(path), tf.uint16, little_endian=True)
    cube = tf.reshape(tf.cast(raw, tf.float32), (ROWS, COLS, BANDS))
    refl = (cube - DARK) / (WHITE - DARK)
    mean, var = tf.nn.moments(refl, axes=[0, 1], keepdims=True)
    refl = (refl - mean) / tf.sqrt(var + 1e-6)
    deriv = refl[..., 1:] - refl[..., :-1]
    feats = tf.concat([refl, deriv], axis=-1)
    feats = tf.image.resize(feats, (ROWS // 2, COLS // 2), method="area")
    return feats, label


def make_dataset(paths, labels):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(len(paths), seed=5).repeat()
    return ds.map(decode_patch).batch(BATCH)


def build_model():
    inp = keras.Input((ROWS // 2, COLS // 2, 2 * BANDS - 1))
    x = keras.layers.Conv2D(64, 1, activation="relu")(inp)
    x = keras.layers.Conv2D(48, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(96, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(CLASSES, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def train(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    clock = StepClock()
    t0 = time.perf_counter()
    hist = model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[clock], verbose=0)
    return seconds_per_step(clock.gaps), time.perf_counter() - t0, hist.history["loss"][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="u34_input_decoderaw_hyperspectral_")
    try:
        paths, labels = write_cubes(root, np.random.default_rng(2))
        full, wall, loss = train(make_dataset(paths, labels))
        emit({"steps_per_second": 1.0 / full})
        msg = f"hyperspectral: {1.0 / full:.2f} steps/s, fit {wall:.1f}s, loss {loss:.4f}"
        if args.truth:
            one = next(iter(make_dataset(paths, labels)))
            compute, _, _ = train(tf.data.Dataset.from_tensors(one).repeat())
            frac = min(max((full - compute) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth_input_fraction {frac:.3f} (full {full * 1e3:.1f} ms, compute {compute * 1e3:.1f} ms)"
        print(msg)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
