"""Colour-swatch dye-recipe regressor.

Spectrophotometer readings of dyed fabric swatches (31 reflectance bands,
400-700 nm, plus substrate and finish flags) are mapped to dye-recipe
concentrations and CIELAB targets. All batches are pre-built tensors; a
hand-written @tf.function GradientTape loop does the training.
"""
import time; T0 = time.perf_counter()
import os
import sys
import json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


SEED = 8506
BATCH = 256
STEPS = 600
N_SWATCH = 16384
BANDS = 31
N_DYES = 6
SUBSTRATES = ["cotton", "polyester", "wool", "silk", "viscose", "linen"]

rng = np.random.default_rng(SEED)
keras.utils.set_random_seed(SEED)


def make_swatches():
    wl = np.linspace(400, 700, BANDS, dtype=np.float32)
    centres = np.linspace(430, 670, N_DYES, dtype=np.float32)
    recipe = rng.dirichlet(np.ones(N_DYES) * 0.6, size=N_SWATCH).astype(np.float32) * rng.uniform(0.2, 3.0, size=(N_SWATCH, 1))
    absorb = np.exp(-((wl[None, :] - centres[:, None]) ** 2) / (2 * 35.0 ** 2))  # (dyes, bands)
    sub = rng.integers(0, len(SUBSTRATES), size=N_SWATCH)
    base = 0.85 - 0.05 * sub[:, None]
    refl = base * np.exp(-recipe @ absorb) + rng.normal(0, 0.005, size=(N_SWATCH, BANDS))
    onehot = np.eye(len(SUBSTRATES), dtype=np.float32)[sub]
    x = np.concatenate([refl.astype(np.float32), onehot], axis=1)
    lab = np.stack([refl[:, 10:20].mean(1) * 100, refl[:, 20:].mean(1) - refl[:, :10].mean(1), refl[:, 12:18].mean(1) - refl[:, 25:].mean(1)], 1)
    y = np.concatenate([recipe, lab.astype(np.float32)], axis=1).astype(np.float32)
    return x, y


X, Y = make_swatches()
N_BATCHES = N_SWATCH // BATCH
X_BATCHES = [tf.constant(X[i * BATCH:(i + 1) * BATCH]) for i in range(N_BATCHES)]
Y_BATCHES = [tf.constant(Y[i * BATCH:(i + 1) * BATCH]) for i in range(N_BATCHES)]


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((BANDS + len(SUBSTRATES),))
    h = keras.layers.Dense(768, activation="gelu")(inp)
    for _ in range(3):
        r = keras.layers.Dense(768, activation="gelu")(h)
        h = keras.layers.LayerNormalization()(keras.layers.Add()([h, r]))
    out = keras.layers.Dense(N_DYES + 3)(h)
    return keras.Model(inp, out)


def train(feed):
    model = build_model()
    opt = keras.optimizers.Adam(5e-4)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean(tf.square(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    stamps = []
    loss = float("nan")
    for step in range(STEPS):
        xb, yb = feed(step)
        loss = float(train_step(xb, yb))
        stamps.append(time.perf_counter())
    gaps = [b - a for a, b in zip(stamps[:-1], stamps[1:])][5:]
    return sum(gaps) / len(gaps), loss


def main():
    spf, loss = train(lambda step: (X_BATCHES[step % N_BATCHES], Y_BATCHES[step % N_BATCHES]))
    emit({"steps_per_second": 1.0 / spf})
    line = f"swatchhue: {STEPS} steps, {spf*1000:.1f} ms/step, loss {loss:.4f}"
    if TRUTH:
        fixed = (X_BATCHES[0], Y_BATCHES[0])
        spc, _ = train(lambda step: fixed)
        frac = min(max((spf - spc) / spf, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        line += f", compute-only {spc*1000:.1f} ms/step, truth_input_fraction {frac:.3f}"
    print(line + f", total {time.perf_counter()-T0:.1f}s")


if __name__ == "__main__":
    main()
