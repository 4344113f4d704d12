"""Industrial bakery QA: grades sourdough crumb structure from slice scans.
Input path: tf.data over record indices, map(tf.numpy_function) that inflates a
zlib-compressed 8-bit crumb scan, applies random rotation/flip, gamma and
exposure jitter, and a NumPy pore-contrast filter bank.  Deliberate bottleneck:
input (numpy_function holds the GIL, map is sequential)."""
import time
_T0 = time.perf_counter()
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


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g)) if g else float("nan")


def input_fraction(full, compute):
    return min(1.0, max(0.0, (full - compute) / full))


class StepTimer(keras.callbacks.Callback):
    """Stamps time.perf_counter() at every train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true",
                    help="also train on one reused in-memory batch and report the input fraction")
    return ap.parse_args()
import zlib

BATCH = 32
EPOCHS = 4
STEPS = 50
SIDE = 40
POOL = 256


def make_scans(seed=33):
    rng = np.random.default_rng(seed)
    blobs, labels = [], []
    yy, xx = np.mgrid[0:SIDE, 0:SIDE]
    for i in range(POOL):
        grade = int(rng.integers(0, 4))
        img = np.full((SIDE, SIDE), 200.0)
        for _ in range(20 + 15 * grade):
            cy, cx = rng.uniform(0, SIDE, 2); r = rng.uniform(1.0, 2.0 + grade)
            img[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = 60.0
        img += rng.normal(0, 12, img.shape)
        blobs.append(zlib.compress(np.clip(img, 0, 255).astype(np.uint8).tobytes(), 6))
        labels.append(grade)
    return blobs, np.array(labels, np.int32)


def decode_and_augment(idx, blobs, labels, seed):
    rng = np.random.default_rng(int(seed) * 100003 + int(idx))
    i = int(idx) % len(blobs)
    img = np.frombuffer(zlib.decompress(blobs[i]), np.uint8).reshape(SIDE, SIDE).astype(np.float32) / 255.0
    img = np.rot90(img, int(rng.integers(0, 4)))
    if rng.random() < 0.5:
        img = img[:, ::-1]
    img = np.clip(img * rng.uniform(0.85, 1.15), 0, 1) ** rng.uniform(0.8, 1.25)
    feats = [img]
    for k in (1, 2, 3):
        for ax in (0, 1):
            shifted = np.roll(img, k, axis=ax)
            feats.append(np.abs(img - shifted))
    # pore statistics: run lengths of dark pixels, row by row
    dark = img < 0.45
    runs = np.zeros_like(img)
    for r in range(SIDE):
        edges = np.flatnonzero(np.diff(dark[r].astype(np.int8)))
        if edges.size > 1:
            lengths = np.diff(edges)
            runs[r, :] = lengths.mean() / SIDE
    stack = np.stack(feats[:3] + [runs, sum(feats[1:]) / 6.0], -1)
    return stack.astype(np.float32), np.int32(labels[i])


def make_dataset(blobs, labels, seed):
    def fn(idx):
        x, y = tf.numpy_function(lambda j: decode_and_augment(j, blobs, labels, seed), [idx],
                                 (tf.float32, tf.int32))
        x.set_shape((SIDE, SIDE, 5)); y.set_shape(())
        return x, y
    return tf.data.Dataset.range(10 ** 9).map(fn).batch(BATCH).prefetch(1)


def build_model():
    inp = keras.Input((SIDE, SIDE, 5))
    x = keras.layers.Conv2D(12, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return m


def train(ds):
    keras.utils.set_random_seed(8)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    args = parse_args()
    blobs, labels = make_scans()
    ds = make_dataset(blobs, labels, seed=1)
    full = train(ds)
    emit({"steps_per_second": 1.0 / full})
    print(f"[sourdough] full run: {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, wall {time.perf_counter() - _T0:.1f}s")
    if args.truth:
        batch = next(iter(make_dataset(blobs, labels, seed=2)))
        compute = train(tf.data.Dataset.from_tensors(batch).repeat())
        frac = input_fraction(full, compute)
        emit({"truth_input_fraction": frac})
        print(f"[sourdough] truth: compute {compute * 1000:.1f} ms/step, input fraction {frac:.3f}")


if __name__ == "__main__":
    main()
