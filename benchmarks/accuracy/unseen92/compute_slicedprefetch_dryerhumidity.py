import time; T0 = time.perf_counter()
# Tumble dryer exhaust humidity / temperature traces -> minutes of drying
# left. All traces are generated once into memory and fed through
# tf.data.Dataset.from_tensor_slices(...).batch().prefetch(); the deep
# dilated Conv1D model dominates each step.
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


BATCH = 64
STEPS = 36
EPOCHS = 3
T_LEN = 256
N = BATCH * STEPS

rng = np.random.default_rng(2092)
t = np.linspace(0, 1, T_LEN, dtype=np.float32)[None, :]
load_kg = rng.uniform(2, 9, size=(N, 1)).astype(np.float32)
moisture = rng.uniform(0.4, 0.9, size=(N, 1)).astype(np.float32)
rh = 95 * np.exp(-t * (3.0 / load_kg) * (1.2 - moisture)) + rng.normal(0, 1.5, (N, T_LEN))
exhaust_c = 35 + 30 * (1 - np.exp(-4 * t)) + rng.normal(0, 0.8, (N, T_LEN))
drum_c = exhaust_c + 8 + rng.normal(0, 0.8, (N, T_LEN))
lint_dp = 0.2 + t * rng.uniform(0.1, 1.0, (N, 1)) + rng.normal(0, 0.03, (N, T_LEN))
X = np.stack([rh / 100, exhaust_c / 80, drum_c / 80, lint_dp], axis=-1).astype(np.float32)
Y = (load_kg * moisture * 9.0 + rng.normal(0, 2, (N, 1))).astype(np.float32)


def make_model():
    inp = keras.Input(shape=(T_LEN, 4))
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(inp)
    for d in (1, 2, 4, 8, 16):
        y = keras.layers.Conv1D(96, 3, padding="causal", dilation_rate=d, activation="relu")(x)
        y = keras.layers.Conv1D(96, 1, activation="relu")(y)
        x = keras.layers.Add()([x, y])
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    out = keras.layers.Dense(1)(x)
    m = keras.Model(inp, out)
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def train(ds):
    keras.utils.set_random_seed(12)
    model = make_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0, shuffle=False)
    return timer.seconds_per_step()


ds = (tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(N, seed=1)
      .batch(BATCH, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print(f"[dryerhumidity] normal: {full*1000:.1f} ms/step, {1/full:.2f} steps/s, wall {time.perf_counter()-T0:.1f}s")

if TRUTH:
    one = (X[:BATCH], Y[:BATCH])
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print(f"[dryerhumidity] truth: compute {compute*1000:.1f} ms/step, full {full*1000:.1f} ms/step, "
          f"input fraction {frac:.3f}, wall {time.perf_counter()-T0:.1f}s")
