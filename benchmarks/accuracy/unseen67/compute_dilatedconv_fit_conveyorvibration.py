"""Idler-bearing fault detection on conveyor-belt vibration windows (mining / bulk handling).

Data path: triaxial accelerometer windows synthesised once into numpy, then
tf.data.Dataset.from_tensor_slices -> batch -> repeat -> prefetch; model.fit.
Model: a stack of dilated Conv1D blocks (the compute-heavy part).
Known bottleneck: compute (input pipeline is in-memory and cheap).
"""
import time
_T0 = time.perf_counter()
import argparse
import json
import os

import numpy as np
import tensorflow as tf
import keras

BATCH = 32
STEPS = 30
EPOCHS = 2
WIN = 256
NCLASS = 4  # healthy, outer race, inner race, belt misalignment


def emit(rec):
    p = os.environ.get("ACCURACY_OUT")
    if p:
        with open(p, "a") as f:
            f.write(json.dumps(rec) + "\n")


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


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def make_data(seed=1, n=384):
    rng = np.random.default_rng(seed)
    t = np.arange(WIN) / 5120.0
    y = rng.integers(0, NCLASS, n)
    base = np.sin(2 * np.pi * 29.5 * t)[None, :, None]
    fault_hz = np.array([0.0, 107.3, 162.1, 14.75])[y][:, None, None]
    x = 0.3 * base + 0.2 * np.sin(2 * np.pi * fault_hz * t[None, :, None] * np.array([1, 1.3, 0.7]))
    x = x + 0.1 * rng.standard_normal((n, WIN, 3))
    return x.astype(np.float32), y.astype(np.int32)


def build_model():
    inp = keras.Input((WIN, 3))
    x = keras.layers.Conv1D(32, 7, padding="same", activation="relu")(inp)
    for d in (1, 2, 4, 8, 16):
        h = keras.layers.Conv1D(48, 5, padding="same", dilation_rate=d, activation="relu")(x)
        h = keras.layers.Conv1D(32, 1, padding="same")(h)
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, h]))
    x = keras.layers.GlobalAveragePooling1D()(x)
    m = keras.Model(inp, keras.layers.Dense(NCLASS)(x))
    m.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def run(ds):
    keras.utils.set_random_seed(0)
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return sec_per_step(timer.gaps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", action="store_true")
    args = ap.parse_args()
    x, y = make_data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=0).repeat().batch(BATCH).prefetch(2)
    t = time.perf_counter()
    full = run(ds)
    print("[dilatedconv] steps/s=%.2f sec/step=%.4f train_s=%.1f" % (1 / full, full, time.perf_counter() - t))
    emit({"steps_per_second": 1.0 / full})
    if args.truth:
        batch = next(iter(ds))
        comp = run(tf.data.Dataset.from_tensors(batch).repeat())
        frac = min(max((full - comp) / full, 0.0), 1.0)
        print("[dilatedconv] truth compute sec/step=%.4f input_fraction=%.3f" % (comp, frac))
        emit({"truth_input_fraction": frac})
    print("[dilatedconv] wall_s=%.1f" % (time.perf_counter() - _T0))


if __name__ == "__main__":
    main()
