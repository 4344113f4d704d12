import time
WALL0 = time.perf_counter()
import os
import sys
import json
import shutil
import tempfile
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

TRUTH = "--truth" in sys.argv


class StepTimer(keras.callbacks.Callback):
    """Records perf_counter at each train batch end; gaps only within an epoch."""

    def __init__(self):
        super().__init__()
        self.gaps = []
        self.last = None

    def on_epoch_begin(self, epoch, logs=None):
        self.last = None

    def on_train_batch_end(self, batch, logs=None):
        t = time.perf_counter()
        if self.last is not None:
            self.gaps.append(t - self.last)
        self.last = t


def sec_per_step(gaps):
    g = gaps[5:] if len(gaps) > 5 else gaps
    return float(np.mean(g))


def emit(record):
    path = os.environ.get("ACCURACY_OUT")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(record) + "\n")


def emit_truth(full, compute):
    frac = min(max((full - compute) / full, 0.0), 1.0)
    emit({"truth_input_fraction": frac})
    print(f"truth: full={full*1000:.1f} ms/step compute={compute*1000:.1f} ms/step "
          f"truth_input_fraction={frac:.3f}")
    return frac

"""Soil-moisture downscaling from passive-microwave patches (compute-bound).

Synthetic 32x32 brightness-temperature / NDVI / elevation / precipitation
patches are held in memory as arrays; tf.data from_tensor_slices -> cache ->
shuffle -> batch -> prefetch feeds model.fit with a residual CNN regressing
the fine-scale soil-moisture map. The input pipeline is trivial; the step
time is the convolution compute.
"""
SEED = 58
BATCH = 24
STEPS = 18
EPOCHS = 3
HW = 32
CH = 4

rng = np.random.default_rng(SEED)
X = rng.normal(0, 1, (2048, HW, HW, CH)).astype(np.float32)
Y = (0.3 * X[..., :1] - 0.2 * X[..., 1:2] + 0.1 * rng.normal(0, 1, (2048, HW, HW, 1))).astype(np.float32)


def make_ds():
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).cache().shuffle(2048, seed=SEED).repeat()
    return ds.batch(BATCH, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def build_model():
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((HW, HW, CH))
    h = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(inp)
    for _ in range(2):
        r = keras.layers.Conv2D(24, 3, padding="same", activation="relu")(h)
        r = keras.layers.Conv2D(24, 3, padding="same")(r)
        h = keras.layers.Activation("relu")(keras.layers.Add()([h, r]))
    out = keras.layers.Conv2D(1, 1)(h)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse")
    return m


def run(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return sec_per_step(timer.gaps)


print(f"setup done at {time.perf_counter()-WALL0:.1f} s")
full = run(make_ds())
emit({"steps_per_second": 1.0 / full})
print(f"compute_rescnn_fit_soilmoisturemaps: {full*1000:.1f} ms/step, "
      f"{1.0/full:.2f} steps/s, wall {time.perf_counter()-WALL0:.1f} s")
if TRUTH:
    batch = next(iter(make_ds()))
    compute = run(tf.data.Dataset.from_tensors(batch).repeat())
    emit_truth(full, compute)
