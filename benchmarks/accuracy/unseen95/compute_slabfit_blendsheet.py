"""Blend recipe sheets -> cup profile of the finished blend.

Each recipe row gives the share of 24 estate teas plus firing / moisture
settings; the target is a 16-attribute panel profile.  All rows live in
memory and are fed with from_tensor_slices + batch + prefetch to a wide
MLP trained with model.fit.
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

BATCH = 256
STEPS = 100
EPOCHS = 4
N_RECIPES = BATCH * STEPS
COMPONENTS = 24
SETTINGS = 8
PROFILE = 16
WIDTH = 1024


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
        g = self.gaps[5:]
        return sum(g) / len(g)


def recipe_sheet(seed):
    rng = np.random.default_rng(seed)
    shares = rng.dirichlet(np.full(COMPONENTS, 0.4), N_RECIPES).astype(np.float32)
    settings = rng.normal(0, 1, (N_RECIPES, SETTINGS)).astype(np.float32)
    estate_profiles = rng.normal(0, 1, (COMPONENTS, PROFILE)).astype(np.float32)
    mix = rng.normal(0, 0.3, (SETTINGS, PROFILE)).astype(np.float32)
    profile = shares @ estate_profiles + np.tanh(settings @ mix) + rng.normal(0, 0.05, (N_RECIPES, PROFILE))
    return np.concatenate([shares, settings], 1), profile.astype(np.float32)


def build_model():
    keras.utils.set_random_seed(95)
    model = keras.Sequential([
        keras.Input((COMPONENTS + SETTINGS,)),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(WIDTH, activation="relu"),
        keras.layers.Dense(PROFILE),
    ])
    model.compile(optimizer="adam", loss="mse")
    return model


def train(ds):
    model = build_model()
    timer = StepTimer()
    model.fit(ds, steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=[timer], verbose=0)
    return timer.seconds_per_step()


x, y = recipe_sheet(61)
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=1).batch(BATCH, drop_remainder=True).repeat().prefetch(2)
full = train(ds)
emit({"steps_per_second": 1.0 / full})
print("[blendsheet] normal run: %.4f s/step, %.2f steps/s, wall %.1f s"
      % (full, 1.0 / full, time.perf_counter() - T0))

if TRUTH:
    one = next(iter(ds))
    compute = train(tf.data.Dataset.from_tensors(one).repeat())
    frac = min(1.0, max(0.0, (full - compute) / full))
    emit({"truth_input_fraction": frac})
    print("[blendsheet] truth: full %.4f s/step, compute-only %.4f s/step, input fraction %.3f"
          % (full, compute, frac))
