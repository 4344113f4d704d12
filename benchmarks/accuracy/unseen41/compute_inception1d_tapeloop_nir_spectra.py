"""Protein-content regression for wheat samples from near-infrared reflectance spectra (1024 wavelengths).
Data path: synthetic absorbance spectra (overlapping Gaussian bands + baseline drift) live in in-memory numpy arrays;
a Python loop slices shuffled mini-batches and runs a @tf.function GradientTape step of an InceptionTime-style 1-D
network (parallel kernel-9/19/39 convolutions with bottlenecks and residual shortcuts)."""
import argparse, itertools, json, os, shutil, sys, tempfile, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

SEED = 41
N = 4096
L = 1024
BATCH = 32
STEPS = 60


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


def make_spectra(rng):
    wl = np.linspace(0, 1, L, dtype=np.float32)
    protein = rng.uniform(9, 16, N).astype(np.float32)
    centers = np.array([0.18, 0.33, 0.52, 0.71, 0.86], np.float32)
    amps = rng.uniform(0.2, 1.0, (N, 5)).astype(np.float32)
    amps[:, 2] = protein / 16
    x = (amps[:, :, None] * np.exp(-((wl[None, None] - centers[None, :, None]) ** 2) / 0.002)).sum(1)
    x += rng.normal(0, 0.01, (N, L)).astype(np.float32) + (rng.uniform(-0.2, 0.2, (N, 1)) * wl).astype(np.float32)
    return x[..., None].astype(np.float32), ((protein - 12.5) / 2).astype(np.float32)[:, None]


def inception_block(x, f):
    b = keras.layers.Conv1D(f, 1, padding="same", use_bias=False)(x)
    branches = [keras.layers.Conv1D(f, k, padding="same", use_bias=False)(b) for k in (9, 19, 39)]
    mp = keras.layers.MaxPooling1D(3, strides=1, padding="same")(x)
    branches.append(keras.layers.Conv1D(f, 1, padding="same", use_bias=False)(mp))
    h = keras.layers.Concatenate()(branches)
    h = keras.layers.BatchNormalization()(h)
    return keras.layers.Activation("relu")(h)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((L, 1))
    h = inp
    res = inp
    for i in range(4):
        h = inception_block(h, 16)
        if i % 2 == 1:
            sc = keras.layers.Conv1D(64, 1, padding="same", use_bias=False)(res)
            h = keras.layers.Activation("relu")(keras.layers.Add()([h, keras.layers.BatchNormalization()(sc)]))
            res = h
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(inp, keras.layers.Dense(1)(h))


def train(source):
    model = build_model()
    opt = keras.optimizers.Adam(1e-3)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps, loss = [], None
    for _, (x, y) in zip(range(STEPS), source):
        loss = float(step(x, y))
        stamps.append(time.perf_counter())
    return float(np.mean(np.diff(stamps)[5:])), loss


def minibatches(x, y, seed):
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(x))
        for i in range(0, len(x) - BATCH + 1, BATCH):
            idx = order[i:i + BATCH]
            yield x[idx], y[idx]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="u41_compute_inception1d_tapeloop_nir_spectra_")
    try:
        x, y = make_spectra(np.random.default_rng(SEED))
        full, loss = train(minibatches(x, y, SEED))
        emit({"steps_per_second": 1.0 / full})
        msg = f"compute_inception1d_tapeloop_nir_spectra: {1.0 / full:.2f} steps/s, final mse {loss:.4f}"
        if args.truth:
            bx, by = next(minibatches(x, y, SEED))
            comp, _ = train(itertools.repeat((bx, by)))
            frac = min(max((full - comp) / full, 0.0), 1.0)
            emit({"truth_input_fraction": frac})
            msg += f", truth input fraction {frac:.3f}"
        print(msg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
