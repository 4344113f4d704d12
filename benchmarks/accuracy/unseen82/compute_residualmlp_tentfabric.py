import time; T0 = time.perf_counter()
"""Tent fabric lab tests -> hours to failure under UV + wind load (regression).

Lab results (denier, coating, hydrostatic head, tear and seam strength,
UV exposure, peel tests, ...) are generated once into NumPy arrays and fed
from memory with tf.data from_tensor_slices + batch + prefetch. The model
is a wide residual MLP, so each step is dominated by matrix multiplies.
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv
OUT = os.environ.get("ACCURACY_OUT")

BATCH = 256
STEPS = 40
EPOCHS = 3
FEATS = 48
WIDTH = 1024
BLOCKS = 3


def emit(record):
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps(record) + "\n")


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        now = time.perf_counter()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def seconds_per_step(self):
        g = self.gaps[5:] if len(self.gaps) > 5 else self.gaps
        return sum(g) / len(g)


def make_tests(n, seed=82):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATS)).astype(np.float32)
    denier, hh, uv, tear = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
    y = (1500 + 300 * denier + 200 * hh - 400 * uv + 150 * tear * hh
         + rng.normal(0, 50, n)).astype(np.float32) / 1000.0
    return x, y[:, None]


def build_model():
    keras.utils.set_random_seed(82)
    inp = keras.Input((FEATS,))
    x = keras.layers.Dense(WIDTH, activation="relu")(inp)
    for _ in range(BLOCKS):
        h = keras.layers.Dense(WIDTH, activation="relu")(x)
        h = keras.layers.Dense(WIDTH)(h)
        x = keras.layers.Activation("relu")(keras.layers.Add()([x, h]))
    out = keras.layers.Dense(1)(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="mse")
    return model


def main():
    x, y = make_tests(BATCH * STEPS)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat().prefetch(2)
    timer = StepTimer()
    model = build_model()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    full = timer.seconds_per_step()
    emit({"steps_per_second": 1.0 / full})
    msg = f"tentfabric: {full * 1000:.1f} ms/step over {len(timer.gaps)} gaps"
    if TRUTH:
        batch = (x[:BATCH], y[:BATCH])
        ttimer = StepTimer()
        tmodel = build_model()
        tmodel.fit(tf.data.Dataset.from_tensors(batch).repeat(), steps_per_epoch=STEPS,
                   epochs=EPOCHS, callbacks=[ttimer], verbose=0)
        compute = ttimer.seconds_per_step()
        frac = min(max((full - compute) / full, 0.0), 1.0)
        emit({"truth_input_fraction": frac})
        msg += f", one-batch {compute * 1000:.1f} ms/step, truth_input_fraction={frac:.3f}"
    print(msg + f", wall {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
