"""Steel grain-size classifier on optical micrographs; residual CNN trained with model.fit.

Micrograph tiles are synthesised once (Voronoi-like grain boundaries) and held in memory;
a cached tf.data pipeline (from_tensor_slices -> batch -> cache) feeds model.fit. The
residual conv stack dominates every step: this script is compute-bound by design.
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
N = 1536
EPOCHS = 2
STEPS = N // BATCH
SIZE = 64


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


def make_tiles(rng):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    x = np.empty((N, SIZE, SIZE, 1), np.float32)
    y = np.empty(N, np.int32)
    for i in range(N):
        cls = i % 4
        n_seeds = 6 + 10 * cls
        pts = rng.uniform(0, SIZE, (n_seeds, 2))
        d = (yy[..., None] - pts[:, 0]) ** 2 + (xx[..., None] - pts[:, 1]) ** 2
        part = np.sort(d, axis=-1)
        edge = (np.sqrt(part[..., 1]) - np.sqrt(part[..., 0])) < 1.2
        x[i, ..., 0] = 0.8 - 0.6 * edge + rng.normal(0, 0.05, (SIZE, SIZE))
        y[i] = cls
    return x, y


def res_block(x, f):
    s = x
    x = keras.layers.Conv2D(f, 3, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(f, 3, padding="same")(x)
    if s.shape[-1] != f:
        s = keras.layers.Conv2D(f, 1)(s)
    return keras.layers.Activation("relu")(keras.layers.Add()([x, s]))


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((SIZE, SIZE, 1))
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = res_block(x, 16)
    x = keras.layers.MaxPooling2D()(x)
    x = res_block(x, 32)
    x = res_block(x, 32)
    x = keras.layers.MaxPooling2D()(x)
    x = res_block(x, 48)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(4, activation="softmax")(x)
    m = keras.Model(inp, out)
    m.compile("adam", "sparse_categorical_crossentropy")
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
    x, y = make_tiles(np.random.default_rng(SEED))
    model = build_model()
    timer = StepTimer()
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=SEED).batch(BATCH, drop_remainder=True)
          .cache().repeat().prefetch(4))
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = "grainmicrographs resconv fit: %.1f ms/step, %.2f steps/s" % (full * 1e3, 1.0 / full)
    if args.truth:
        fixed = tf.data.Dataset.from_tensors((x[:BATCH], y[:BATCH])).repeat()
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
