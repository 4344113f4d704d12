import time; T0 = time.perf_counter()
"""Map-projection regressor trained with model.fit on in-memory arrays.

Geographic coordinates plus projection parameters (central meridian, false
easting/northing, scale factor, standard parallels) are tabulated up front
with numpy, together with the projected easting/northing of a transverse
Mercator-like formula.  A wide dense network learns the forward projection;
all data sits in memory, so each step is pure compute.
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

N = 16384
BATCH = 256
EPOCHS = 3


def emit(record):
    if OUT:
        with open(OUT, "a") as fh:
            fh.write(json.dumps(record) + "\n")


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
        gaps = self.gaps[5:] or self.gaps
        return sum(gaps) / len(gaps)


def projection_table():
    rs = np.random.RandomState(2)
    lat = rs.uniform(-70, 70, N)
    lon = rs.uniform(-180, 180, N)
    cm = rs.choice(np.arange(-177, 180, 6), N).astype(np.float64)
    k0 = rs.uniform(0.9990, 1.0, N)
    fe = rs.choice([500000.0, 400000.0, 0.0], N)
    fn = rs.choice([0.0, 10000000.0, -100000.0], N)
    sp1 = rs.uniform(20, 60, N)
    sp2 = sp1 + rs.uniform(2, 10, N)
    phi = np.radians(lat)
    dl = np.radians(lon - cm)
    dl = (dl + np.pi) % (2 * np.pi) - np.pi
    b = np.cos(phi) * np.sin(dl)
    east = 0.5 * k0 * 6378137.0 * np.log((1 + b) / (1 - b + 1e-9) + 1e-9) + fe
    north = k0 * 6378137.0 * np.arctan2(np.tan(phi), np.cos(dl)) + fn
    base = np.stack([lat / 90, lon / 180, cm / 180, (k0 - 0.9995) * 1000, fe / 5e5, fn / 1e7,
                     sp1 / 90, sp2 / 90, np.sin(phi), np.cos(phi), np.sin(dl), np.cos(dl)], 1)
    x = np.concatenate([base, np.sin(base * 3.0), np.cos(base * 3.0)], 1).astype(np.float32)
    y = np.stack([east / 1e7, north / 1e7], 1).astype(np.float32)
    return x, y


def build_model():
    keras.utils.set_random_seed(17)
    model = keras.Sequential([
        keras.Input((36,)),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(1536, activation="relu"),
        keras.layers.Dense(2),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


x, y = projection_table()
steps = N // BATCH


def train(data, **kw):
    model = build_model()
    timer = StepTimer()
    model.fit(data, epochs=EPOCHS, callbacks=[timer], verbose=0, **kw)
    return timer.seconds_per_step()


full = train(x, y=y, batch_size=BATCH, shuffle=True)
emit({"steps_per_second": 1.0 / full})
print(f"projectora: in-memory fit {full * 1000:.1f} ms/step, {1.0 / full:.1f} steps/s, "
      f"wall {time.perf_counter() - T0:.1f} s")

if TRUTH:
    one = (tf.constant(x[:BATCH]), tf.constant(y[:BATCH]))
    compute = train(tf.data.Dataset.from_tensors(one).repeat(), steps_per_epoch=steps)
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"projectora: truth compute {compute * 1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter() - T0:.1f} s")
