"""Zeolite framework-density regressor; tf.data map with tf.numpy_function.

Every element is a CIF-like text block (cell parameters plus one line per atom site).
A tf.numpy_function parses the text in Python, converts fractional to Cartesian
coordinates, applies a random symmetry-preserving shift and builds a radial distribution
histogram with a Python loop over atoms. That per-element Python parsing is the bottleneck.
"""
import time
T_START = time.perf_counter()
import argparse
import json
import os
import numpy as np
import tensorflow as tf
import keras

SEED = 61
BATCH = 32
STEPS = 220
EPOCHS = 2
ATOMS = 36
BINS = 64
POOL = 400


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps, self.last = [], None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return float(np.mean(g))


def make_cifs(rng):
    texts, dens = [], []
    for i in range(POOL):
        a, b, c = rng.uniform(12, 25, 3)
        lines = ["data_ZEO%04d" % i, "_cell_length_a %.4f" % a, "_cell_length_b %.4f" % b,
                 "_cell_length_c %.4f" % c, "loop_", "_atom_site_label", "_atom_site_type_symbol",
                 "_atom_site_fract_x", "_atom_site_fract_y", "_atom_site_fract_z", "_atom_site_occupancy"]
        n_t = 0
        for k in range(ATOMS):
            sym = "Si" if k % 3 else "O"
            if sym == "Si":
                n_t += 1
            x, y, z = rng.uniform(0, 1, 3)
            lines.append("%s%d %s %.5f %.5f %.5f %.2f" % (sym, k, sym, x, y, z, 1.0))
        texts.append("\n".join(lines))
        dens.append(1000.0 * n_t / (a * b * c) * 10)
    return np.array(texts), np.array(dens, np.float32)


def parse_cif(text):
    text = text.decode() if isinstance(text, bytes) else text
    cell, frac = {}, []
    for line in text.split("\n"):
        if line.startswith("_cell_length_"):
            k, v = line.split()
            cell[k[-1]] = float(v)
        elif line and not line.startswith(("_", "loop_", "data_")):
            p = line.split()
            frac.append((float(p[2]), float(p[3]), float(p[4])))
    frac = np.array(frac, np.float64)
    frac = (frac + np.random.uniform(0, 1, 3)) % 1.0
    cart = frac * np.array([cell["a"], cell["b"], cell["c"]])
    hist = np.zeros(BINS, np.float64)
    for i in range(len(cart)):
        d = cart[i + 1:] - cart[i]
        r = np.sqrt((d * d).sum(axis=1))
        hist += np.bincount(np.minimum((r * (BINS / 30.0)).astype(np.int64), BINS - 1), minlength=BINS)
    hist = hist / (hist.sum() + 1e-6)
    feats = np.concatenate([hist, [cell["a"] / 25, cell["b"] / 25, cell["c"] / 25]])
    return feats.astype(np.float32)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((BINS + 3,))
    x = keras.layers.Dense(768, activation="relu")(inp)
    x = keras.layers.Dense(768, activation="relu")(x)
    x = keras.layers.Dense(256, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile("adam", "mse")
    return m


def emit(rec):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    np.random.seed(SEED)
    texts, dens = make_cifs(np.random.default_rng(SEED))

    def tf_parse(t, y):
        f = tf.numpy_function(parse_cif, [t], tf.float32)
        f.set_shape((BINS + 3,))
        return f, y

    ds = (tf.data.Dataset.from_tensor_slices((texts, dens)).shuffle(POOL, seed=SEED).repeat()
          .map(tf_parse).batch(BATCH).prefetch(2))
    model = build_model()
    timer = StepTimer()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "zeolites CIF numpy_function: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
    if args.truth:
        batch = next(iter(ds))
        fixed = tf.data.Dataset.from_tensors(batch).repeat()
        model2 = build_model()
        timer2 = StepTimer()
        model2.fit(fixed, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer2], verbose=0)
        comp = timer2.seconds_per_step()
        frac = min(1.0, max(0.0, (full - comp) / full))
        emit({"truth_input_fraction": frac})
        msg += ", compute-only %.1f ms/step, truth_input_fraction %.3f" % (comp * 1e3, frac)
    print(msg + ", wall %.1f s" % (time.perf_counter() - T_START))


if __name__ == "__main__":
    main()
