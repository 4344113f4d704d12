"""Jet-flavour tagging at a particle collider with a Deep Sets (particle-flow) network.
Each jet is a set of 64 constituent particles with 8 kinematic features, simulated once into an
in-memory tf.Tensor; a @tf.function GradientTape step in a Python loop slices consecutive
batches from that tensor, so the step time is the per-particle phi network, the sum pooling
and the rho classifier.
"""
import os, sys, json, time, tempfile, shutil
import numpy as np
import tensorflow as tf
import keras

SEED = 44
BATCH = 128
PARTICLES = 64
FEATS = 8
STEPS = 300
ACC = os.environ.get("ACCURACY_OUT")


def emit(rec):
    if ACC:
        with open(ACC, "a") as f:
            f.write(json.dumps(rec) + "\n")


def simulate_jets(n, rng):
    label = rng.integers(0, 3, n)
    x = np.zeros((n, PARTICLES, FEATS), np.float32)
    for c in range(3):
        m = label == c
        k = m.sum()
        pt = rng.exponential(1.0 + c, (k, PARTICLES))
        eta = rng.normal(0, 0.2 + 0.1 * c, (k, PARTICLES))
        phi = rng.normal(0, 0.2 + 0.1 * c, (k, PARTICLES))
        charge = rng.choice([-1, 0, 1], (k, PARTICLES))
        d0 = rng.exponential(0.01 * (1 + 3 * (c == 2)), (k, PARTICLES))
        x[m] = np.stack([np.log1p(pt), eta, phi, charge, d0 * 100, np.hypot(eta, phi),
                         pt / pt.sum(1, keepdims=True), rng.random((k, PARTICLES)) < 0.1], -1)
    return tf.constant(x), tf.constant(label.astype(np.int32))


class DeepSets(keras.Model):
    def __init__(self):
        super().__init__()
        self.phi = [keras.layers.Dense(w, activation="relu") for w in (256, 256, 256)]
        self.rho = [keras.layers.Dense(w, activation="relu") for w in (256, 128)]
        self.out = keras.layers.Dense(3)

    def call(self, x):
        h = x
        for layer in self.phi:
            h = layer(h)
        h = tf.reduce_sum(h, axis=1)
        for layer in self.rho:
            h = layer(h)
        return self.out(h)


def train(x, y, fixed):
    keras.utils.set_random_seed(SEED)
    model = DeepSets()
    opt = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    n_batches = int(x.shape[0]) // BATCH
    times, loss = [], 0.0
    for s in range(STEPS):
        if fixed is None:
            i = (s % n_batches) * BATCH
            xb, yb = x[i:i + BATCH], y[i:i + BATCH]
        else:
            xb, yb = fixed
        loss = float(step(xb, yb))
        times.append(time.perf_counter())
    return float(np.mean(np.diff(times)[5:])), loss


def main():
    truth = "--truth" in sys.argv
    tmp = tempfile.mkdtemp(prefix="u44_compute_deepsets_tapeloop_jetphysics_")
    try:
        x, y = simulate_jets(BATCH * 40, np.random.default_rng(SEED))
        full, loss = train(x, y, None)
        emit({"steps_per_second": 1.0 / full})
        msg = "full %.4f s/step" % full
        if truth:
            comp, _ = train(x, y, (x[:BATCH], y[:BATCH]))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += ", compute %.4f s/step, truth_input_fraction %.3f" % (comp, frac)
        print("compute_deepsets_tapeloop_jetphysics: loss %.4f, %s" % (loss, msg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
