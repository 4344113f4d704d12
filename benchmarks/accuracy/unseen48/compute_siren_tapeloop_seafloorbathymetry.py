"""Seafloor bathymetry as an implicit neural field: a SIREN network (sine-activated MLP)
maps (easting, northing) survey coordinates to depth, fitted to multibeam soundings. The
soundings are synthesised in memory and random minibatches are gathered from numpy arrays
in a @tf.function GradientTape loop; the step is dominated by the wide sine MLP."""
import time
T0 = time.perf_counter()
import json, os, shutil, sys, tempfile
import numpy as np
import tensorflow as tf
import keras

SEED, N, BATCH, STEPS, EPOCHS, WIDTH, DEPTH, OMEGA = 48, 200000, 2048, 90, 3, 384, 5, 30.0


def emit(key, val):
    out = os.environ.get("ACCURACY_OUT")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps({key: val}) + "\n")


def make_soundings():
    rng = np.random.default_rng(SEED)
    xy = rng.uniform(-1, 1, (N, 2)).astype(np.float32)
    x, y = xy[:, 0], xy[:, 1]
    depth = (-2000 + 600 * np.exp(-((x - 0.3) ** 2 + y ** 2) / 0.05) + 150 * np.sin(9 * x) * np.cos(7 * y)
             + 40 * np.sin(31 * x + 5 * y) + rng.normal(0, 5, N))
    return xy, ((depth + 2000) / 300).astype(np.float32)[:, None]


class SineLayer(keras.layers.Layer):
    def __init__(self, units, omega, first=False, **kw):
        super().__init__(**kw)
        self.units, self.omega, self.first = units, omega, first
    def build(self, shape):
        d = shape[-1]
        bound = 1.0 / d if self.first else np.sqrt(6.0 / d) / self.omega
        self.w = self.add_weight(shape=(d, self.units), initializer=keras.initializers.RandomUniform(-bound, bound), name="w")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="b")
    def call(self, x):
        return keras.ops.sin(self.omega * (keras.ops.matmul(x, self.w) + self.b))


def build():
    keras.utils.set_random_seed(SEED)
    layers = [keras.Input((2,)), SineLayer(WIDTH, OMEGA, first=True)]
    layers += [SineLayer(WIDTH, OMEGA) for _ in range(DEPTH - 1)]
    layers.append(keras.layers.Dense(1))
    model = keras.Sequential(layers)
    opt = keras.optimizers.Adam(1e-4)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


def train(step, batch_fn):
    gaps, loss = [], 0.0
    for epoch in range(EPOCHS):
        last = None
        for s in range(STEPS):
            x, y = batch_fn(epoch, s)
            loss = float(step(x, y))
            t = time.perf_counter()
            if last is not None:
                gaps.append(t - last)
            last = t
    g = gaps[5:] or gaps
    return sum(g) / len(g), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u48_compute_siren_tapeloop_seafloorbathymetry_")
    try:
        xy, depth = make_soundings()
        rng = np.random.default_rng(SEED)
        shuffled = {}

        def batch_fn(epoch, s):
            if epoch not in shuffled:  # one shuffle per epoch, then contiguous slices
                perm = rng.permutation(N)
                shuffled.clear()
                shuffled[epoch] = (xy[perm], depth[perm])
            sx, sy = shuffled[epoch]
            return sx[s * BATCH:(s + 1) * BATCH], sy[s * BATCH:(s + 1) * BATCH]

        full, loss = train(build(), batch_fn)
        emit("steps_per_second", 1.0 / full)
        msg = f"siren bathymetry: loss={loss:.4f} step={full*1000:.1f}ms main_wall={time.perf_counter()-T0:.1f}s"
        if truth:
            fixed = batch_fn(0, 0)
            comp, _ = train(build(), lambda e, s: fixed)
            frac = min(1.0, max(0.0, (full - comp) / full))
            emit("truth_input_fraction", frac)
            msg += f" compute={comp*1000:.1f}ms truth={frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
