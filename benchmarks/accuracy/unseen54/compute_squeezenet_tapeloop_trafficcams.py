"""Traffic-camera congestion classification with a SqueezeNet-style network.

Synthetic low-resolution road-camera frames (lanes with a varying number of
vehicles) are rendered once into an in-memory tensor.  A custom loop cuts
that resident tensor into batch tensors once and runs a @tf.function GradientTape step
through SqueezeNet fire modules (1x1 squeeze, parallel 1x1/3x3 expand).
"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

H = W = 64
N_IMG = 1024
BATCH = 32
STEPS = 90
N_CLASSES = 3


def make_frames(rng):
    xs = np.empty((N_IMG, H, W, 3), np.float32)
    ys = rng.integers(0, N_CLASSES, N_IMG)
    for i, c in enumerate(ys):
        img = np.full((H, W, 3), 0.35) + rng.normal(0, 0.03, (H, W, 3))
        img[:, ::16, :] = 0.9
        for _ in range(rng.poisson(3 + 8 * c)):
            y, x = rng.integers(0, H - 8), rng.integers(0, W - 12)
            img[y:y + 8, x:x + 12] = rng.random(3)
        xs[i] = img
    return xs, ys.astype(np.int64)


def fire(x, squeeze, expand):
    s = keras.layers.Conv2D(squeeze, 1, activation="relu")(x)
    e1 = keras.layers.Conv2D(expand, 1, activation="relu")(s)
    e3 = keras.layers.Conv2D(expand, 3, padding="same", activation="relu")(s)
    return keras.layers.Concatenate()([e1, e3])


def build_model():
    inp = keras.Input((H, W, 3))
    x = keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(inp)
    x = fire(x, 16, 64)
    x = fire(x, 16, 64)
    x = keras.layers.MaxPooling2D(3, strides=2, padding="same")(x)
    x = fire(x, 32, 128)
    x = fire(x, 32, 128)
    x = keras.layers.MaxPooling2D(3, strides=2, padding="same")(x)
    x = fire(x, 48, 192)
    x = fire(x, 64, 256)
    x = keras.layers.Dropout(0.5)(x)
    x = keras.layers.Conv2D(N_CLASSES, 1)(x)
    out = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, out)


def train(next_batch):
    keras.utils.set_random_seed(17)
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times = []
    for i in range(STEPS):
        x, y = next_batch(i)
        loss = float(step(x, y))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def append(rec):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def main():
    t0 = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="u54_compute_squeezenet_tapeloop_trafficcams_")
    try:
        xs_np, ys_np = make_frames(np.random.default_rng(54))
        xs, ys = tf.constant(xs_np), tf.constant(ys_np)
        nb = N_IMG // BATCH
        resident = [(xs[j * BATCH:(j + 1) * BATCH], ys[j * BATCH:(j + 1) * BATCH]) for j in range(nb)]

        def next_batch(i):
            return resident[i % nb]

        full, loss = train(next_batch)
        append({"steps_per_second": 1.0 / full})
        msg = f"full {full*1000:.1f} ms/step, loss {loss:.3f}"
        if "--truth" in sys.argv:
            fixed = next_batch(0)
            comp, _ = train(lambda i: fixed)
            frac = min(max((full - comp) / full, 0.0), 1.0)
            append({"truth_input_fraction": frac})
            msg += f", compute {comp*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
        print(f"compute_squeezenet_tapeloop_trafficcams: {msg}, wall {time.perf_counter()-t0:.1f}s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
