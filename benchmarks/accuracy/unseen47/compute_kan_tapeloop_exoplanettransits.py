"""Exoplanet vetting: separate planet transits from eclipsing binaries in folded light curves.

Phase-folded, binned photometry (512 bins) for synthetic transit and
eclipsing-binary signals is generated once into in-memory numpy arrays. A
Kolmogorov-Arnold network (Gaussian radial-basis edge functions plus a SiLU
base path per layer) is trained with a @tf.function GradientTape step in a
Python loop over slices of those arrays.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 6147
BINS = 512
HIDDEN = 512
GRIDPTS = 16
BATCH = 256
STEPS = 45
EPOCHS = 2


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def make_curves(rng, n):
    phase = np.linspace(-0.5, 0.5, BINS)
    y = rng.integers(0, 2, n)
    x = np.empty((n, BINS), np.float32)
    for i in range(n):
        depth = rng.uniform(0.002, 0.02)
        dur = rng.uniform(0.02, 0.06)
        prim = depth * np.clip(1 - (phase / dur) ** 2, 0, None) ** 0.3
        flux = 1.0 - prim
        if y[i] == 1:
            flux -= rng.uniform(0.2, 0.8) * depth * np.exp(-0.5 * (((phase + 0.5) % 1.0 - 0.5 - 0.5) / dur) ** 2)
            flux -= rng.uniform(0.0, 0.3) * depth * np.exp(-0.5 * ((np.abs(phase) - 0.5) / dur) ** 2)
        flux += rng.normal(0, 0.002, BINS)
        x[i] = (flux - flux.mean()) / (flux.std() + 1e-6)
    return x, y.astype(np.float32)[:, None]


class KANLayer(keras.layers.Layer):
    def __init__(self, units, grid=GRIDPTS, **kw):
        super().__init__(**kw)
        self.units, self.grid = units, grid

    def build(self, shape):
        d = shape[-1]
        self.centers = tf.constant(np.linspace(-2.5, 2.5, self.grid), tf.float32)
        self.spline_w = self.add_weight(shape=(d * self.grid, self.units),
                                        initializer=keras.initializers.RandomNormal(stddev=0.05))
        self.base_w = self.add_weight(shape=(d, self.units), initializer="glorot_uniform")
        self.norm = keras.layers.LayerNormalization()

    def call(self, x):
        x = self.norm(x)
        phi = tf.exp(-tf.square((x[..., None] - self.centers) / 0.45))
        phi = tf.reshape(phi, (-1, x.shape[-1] * self.grid))
        return tf.matmul(phi, self.spline_w) + tf.matmul(tf.nn.silu(x), self.base_w)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((BINS,))
    x = KANLayer(HIDDEN)(inp)
    x = KANLayer(HIDDEN)(x)
    x = KANLayer(HIDDEN // 2)(x)
    out = keras.layers.Dense(1)(x)
    return keras.Model(inp, out)


def train(batch_fn):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = bce(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            xb, yb = batch_fn(epoch, s)
            loss = float(step(xb, yb))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    return float(np.mean(gaps[5:])), loss


def main():
    t0 = time.perf_counter()
    x, y = make_curves(np.random.default_rng(SEED), BATCH * STEPS)
    perms = [np.random.default_rng(SEED + e).permutation(len(x)) for e in range(EPOCHS)]

    def real_batch(e, s):
        idx = np.sort(perms[e][s * BATCH:(s + 1) * BATCH])
        return x[idx], y[idx]

    sps, loss = train(real_batch)
    emit({"steps_per_second": 1.0 / sps})
    msg = ""
    if "--truth" in sys.argv:
        fixed = (x[:BATCH], y[:BATCH])
        csps, _ = train(lambda e, s: fixed)
        frac = min(max((sps - csps) / sps, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg = " compute %.4fs/step truth_input_fraction %.3f" % (csps, frac)
    print("kan transits: loss %.4f full %.4fs/step%s wall %.1fs"
          % (loss, sps, msg, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
