"""Metamaterial unit-cell design: predict a 64-point transmission spectrum
from 24 geometry parameters (ring radii, gap widths, substrate permittivity),
with all training arrays generated in memory.  A hypernetwork maps each
design to the weights of a per-sample implicit MLP over frequency, which is
evaluated at 64 frequencies; training is a @tf.function GradientTape step in
a Python loop over in-memory numpy slices."""
import os, sys, json, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

BATCH, STEPS, N, P, NF, H = 64, 600, 4096, 24, 64, 48


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_data(rng):
    geo = rng.uniform(0, 1, (N, P)).astype(np.float32)
    f = np.linspace(0, 1, NF, dtype=np.float32)
    f0 = 0.2 + 0.6 * geo[:, :1]
    q = 5 + 40 * geo[:, 1:2]
    spec = 1.0 - 0.9 / (1 + (q * (f[None] - f0)) ** 2) + 0.05 * np.sin(geo[:, 2:3] * 20 * f[None])
    return geo, spec.astype(np.float32), f


class HyperSpectral(keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = keras.Sequential([keras.layers.Dense(512, activation="gelu"),
                                     keras.layers.Dense(512, activation="gelu")])
        self.sizes = [(16, H), (H,), (H, H), (H,), (H, H), (H,), (H, 1), (1,)]
        self.heads = [keras.layers.Dense(int(np.prod(s))) for s in self.sizes]
        self.ff = keras.layers.Dense(16, trainable=False)

    def call(self, geo, freqs):
        z = self.enc(geo)
        ws = [tf.reshape(hd(z) * 0.1, (-1,) + s) for hd, s in zip(self.heads, self.sizes)]
        h = tf.sin(self.ff(freqs[:, None]) * 3.0)            # (NF,16) Fourier features
        h = tf.einsum("fk,bkh->bfh", h, ws[0]) + ws[1][:, None]
        for i in (2, 4):
            h = tf.einsum("bfk,bkh->bfh", tf.nn.gelu(h), ws[i]) + ws[i + 1][:, None]
        return tf.squeeze(tf.einsum("bfk,bkh->bfh", tf.nn.gelu(h), ws[6]), -1) + ws[7]


def build():
    keras.utils.set_random_seed(17)
    return HyperSpectral()


def train(model, batches, freqs):
    opt = keras.optimizers.Adam(3e-4)

    @tf.function
    def step(g, s):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(g, freqs) - s))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    times, loss = [], 0.0
    for k in range(STEPS):
        g, s = batches(k)
        loss = float(step(g, s))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    rng = np.random.default_rng(46)
    geo, spec, f = make_data(rng)
    freqs = tf.constant(f)
    order = np.random.default_rng(1).permutation(N)

    def batches(k):
        sel = order[(k * BATCH) % N:(k * BATCH) % N + BATCH]
        return geo[sel], spec[sel]

    t0 = time.perf_counter()
    full, loss = train(build(), batches, freqs)
    emit("steps_per_second", 1.0 / full)
    msg = "mse=%.5f sec/step=%.4f" % (loss, full)
    if truth:
        g0, s0 = batches(0)
        comp, _ = train(build(), lambda k: (g0, s0), freqs)
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit("truth_input_fraction", frac)
        msg += " compute=%.4f truth=%.3f" % (comp, frac)
    print("compute_hypernet_tapeloop_metamaterials: %s wall_train=%.1fs" % (msg, time.perf_counter() - t0))


if __name__ == "__main__":
    main()
