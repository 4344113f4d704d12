"""Solar physics: convolutional autoencoder for line-of-sight magnetogram patches.

Synthetic 128x128 magnetogram patches (bipolar active regions, quiet-Sun
network noise) are generated once into an in-memory pool; a @tf.function
GradientTape loop trains a conv autoencoder. For a later "training gallery"
animation, every step appends a copy of the input batch and its reconstruction
to a Python list that is never trimmed, so resident memory climbs all run.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 10147
SIZE = 128
POOL = 512
BATCH = 32
STEPS = 180
EPOCHS = 2


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_pool(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    pool = rng.normal(0, 0.05, (POOL, SIZE, SIZE, 1)).astype(np.float32)
    for i in range(POOL):
        for _ in range(int(rng.integers(1, 4))):
            cx, cy = rng.uniform(20, SIZE - 20, 2)
            sep, ang, w = rng.uniform(6, 20), rng.uniform(0, np.pi), rng.uniform(3, 8)
            dx, dy = sep * np.cos(ang) / 2, sep * np.sin(ang) / 2
            amp = rng.uniform(0.5, 2.0)
            pool[i, :, :, 0] += amp * (np.exp(-((xx - cx - dx) ** 2 + (yy - cy - dy) ** 2) / (2 * w * w))
                                       - np.exp(-((xx - cx + dx) ** 2 + (yy - cy + dy) ** 2) / (2 * w * w)))
    return pool


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(x)
    out = keras.layers.Conv2D(1, 3, padding="same")(x)
    return keras.Model(inp, out)


def train(batch_fn):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            recon = model(x, training=True)
            loss = tf.reduce_mean(tf.square(recon - x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, recon

    gallery = []
    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            xb = batch_fn(epoch, s)
            loss_t, recon = step(xb)
            loss = float(loss_t)
            t = time.perf_counter()
            gallery.append((epoch, s, xb.copy(), recon.numpy()))
            if last is not None:
                gaps.append(t - last)
            last = t
    mb = sum(a.nbytes + b.nbytes for _, _, a, b in gallery) / 2 ** 20
    return float(np.mean(gaps[5:])), loss, mb


def main():
    t0 = time.perf_counter()
    pool = make_pool(np.random.default_rng(SEED))
    rng = np.random.default_rng(SEED + 1)
    idx = [[rng.integers(0, POOL, BATCH) for _ in range(STEPS)] for _ in range(EPOCHS)]

    def real_batch(e, s):
        return pool[idx[e][s]]

    sps, loss, mb = train(real_batch)
    emit({"steps_per_second": 1.0 / sps})
    msg = ""
    if "--truth" in sys.argv:
        fixed = pool[idx[0][0]]
        csps, _, _ = train(lambda e, s: fixed)
        frac = min(max((sps - csps) / sps, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
    print("magnetogram AE: loss %.5f full %.4fs/step%s gallery %.0f MiB wall %.1fs"
          % (loss, sps, msg, mb, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
